package record

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agmem/agmem/capture"
	"github.com/agmem/agmem/internal/config"
	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/journal"
	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/redact"
)

// Recorder records into one memory repo, by its configuration as it was when the
// Recorder was opened. It holds nothing open: any number of recorders, in any number
// of processes, share a journal. Its methods are safe for one goroutine at a time.
type Recorder struct {
	journal *journal.Journal
	policy  capture.Policy
	// maxInput bounds one object of input, and one line; idle is how long agmem's open
	// session may be idle before input that names no session starts a new one.
	maxInput int
	idle     time.Duration
	// off is why nothing is recorded at all ("" when input is): capture.enabled, or an
	// opt-out file at or above the working directory.
	off string
	// session is the session of input that names none; "" lets the journal's open
	// session take it. sessionErr is a bad session given, reported only once something
	// would be recorded: an opted-out project's hook stays silent whatever it is given.
	session    string
	sessionErr error
	optOuts    optOuts
}

// Options say how a Recorder records.
type Options struct {
	// Session is the session of input that names none. "" takes $AGMEM_SESSION, else
	// agmem's open session, which a new one replaces after capture.session_idle
	// without activity, and after a SessionStart or SessionEnd.
	Session string
	// SessionIdle, when not 0, is how long agmem's open session may be idle, instead of
	// capture.session_idle.
	SessionIdle time.Duration
	// Agent is the agent whose hook records (claude, codex, gemini, cursor): hook
	// payloads are read as its own. "": each payload's members tell.
	Agent string
	// Getenv reads the environment (AGMEM_* settings, AGMEM_SESSION); nil is os.Getenv.
	Getenv func(string) string
}

// SpoolAfter is how long a record waits for the journal's lock before it keeps its
// entries aside for the next write to append (journal.Append): the agent's call waits
// on its hook, and a gc compacting a year's journal holds the lock for seconds.
const SpoolAfter = time.Second

// configHint goes with every configuration error.
const configHint = `"agmem config" shows every key and where its value comes from`

// Open makes a Recorder of the memory repo at dir (one "agmem init" made).
func Open(dir string, o Options) (*Recorder, error) {
	repo, err := memrepo.At(dir)
	if err != nil {
		return nil, hint.With(err, memrepo.InitHint(dir))
	}
	return OpenRepo(repo, o)
}

// OpenRepo is Open of a memory repo found already; its journal waits for the
// journal's lock as repo.LockUntil says.
func OpenRepo(repo memrepo.Repo, o Options) (*Recorder, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	cfg, err := config.Load(repo.StateDir(), getenv)
	if err != nil {
		return nil, hint.With(err, configHint)
	}
	r := &Recorder{journal: repo.Journal(), maxInput: cfg.MaxInput, idle: cmp.Or(o.SessionIdle, cfg.SessionIdle)}
	r.journal.SpoolAfter = SpoolAfter
	if !cfg.Enabled {
		r.off = "capture.enabled is false"
		return r, nil
	}
	if wd, err := os.Getwd(); err == nil {
		if dir := r.optOuts.of(wd); dir != "" {
			r.off = optedOutBy(dir)
			return r, nil
		}
	}
	if r.policy, err = cfg.Policy(); err != nil {
		return nil, hint.With(err, configHint)
	}
	if _, ok := capture.Agents[o.Agent]; !ok && o.Agent != "" {
		return nil, hint.With(fmt.Errorf("--agent %q is not an agent agmem reads hooks of", o.Agent),
			"name one of claude, codex, gemini, cursor, or leave --agent out")
	}
	r.policy.Agent = o.Agent
	if r.session = cmp.Or(o.Session, getenv("AGMEM_SESSION")); r.session != "" {
		if err := memory.CheckNewSessionID(r.session); err != nil {
			r.sessionErr, r.session = hint.With(err, memory.SessionIDHint), ""
		}
	}
	return r, nil
}

// refuse says in out that a part of the input was not recorded, for err. Its message
// may quote what the input held (a timestamp, an id that is no id), and so is
// redacted (redacted): it is printed, and a daemon keeps it in its log.
func (r *Recorder) refuse(out *Outcome, err error) {
	out.Refused = append(out.Refused, r.redacted(err, nil))
}

// redacted is err said with the secrets its message quotes redacted: whole, and, of the
// secrets of the input it refused (nil: none given), what is quoted of them cut short
// too (a message quotes 40 bytes of a value, where a token is no longer found by its
// rule), down to minQuoted bytes.
func (r *Recorder) redacted(err error, input []byte) error {
	if r.policy.Redactor == nil || err == nil {
		return err
	}
	said, n := r.policy.Redactor.Text(err.Error())
	for _, f := range r.policy.Redactor.Find(string(input)) {
		secret := string(input[f.Start:f.End])
		for k := len(secret); k >= minQuoted; k-- {
			if strings.Contains(said, secret[:k]) {
				said, n = strings.ReplaceAll(said, secret[:k], redact.Mark(f.Rule)), n+1
				break
			}
		}
	}
	if n == 0 {
		return err
	}
	return redactedError{said, err}
}

// minQuoted is the shortest start of a secret that redacted hides in a message.
const minQuoted = 8

// redactedError is an error said with the secrets its message quoted redacted; what it
// wraps (a hint) is kept.
type redactedError struct {
	said string
	err  error
}

func (e redactedError) Error() string { return e.said }
func (e redactedError) Unwrap() error { return e.err }

// Off says why the Recorder records nothing at all: capture.enabled is false, or an
// opt-out file is at or above the working directory; "" when it records.
func (r *Recorder) Off() string { return r.off }

// MaxInput is the bound on one object of input, and one line: capture.max_input_bytes.
func (r *Recorder) MaxInput() int { return r.maxInput }

func optedOutBy(dir string) string {
	return "opted out by " + filepath.Join(dir, capture.OptOutFile)
}

// Outcome is what one call did with its input.
type Outcome struct {
	// Recorded holds, in input order, what the journal holds for each entry kept.
	Recorded []Recorded
	// NotCaptured says why input was deliberately left out: a capture rule, an opt-out
	// file, capture.enabled.
	NotCaptured []string
	// Refused says of each part of the input that was not recorded for what it holds
	// which part it is ("line 3: ...") and why; the rest was recorded.
	Refused []error
}

// Recorded is one entry the journal holds.
type Recorded struct {
	ID        string
	Event     bool // a session event, not an observation
	Duplicate bool // recorded before (the same id, or the same call): kept once
	Spooled   bool // kept aside while another process held the journal: appended by its next write
}

// admitted is an entry on its way in, ready for the journal.
type admitted struct {
	p     journal.Prepared
	event bool
	// defaulted says the entry took the Recorder's session, naming none of its own.
	defaulted bool
}

// admit readies what one input object decoded to: each entry given its id by the rule
// (identify), placed in a session (its own; else the one fallback gives it, when its
// source has one; else the Recorder's), and encoded. An entry that happened in an
// opted-out directory is left out, and said so in out.
func (r *Recorder) admit(d capture.Decoded, fallback func(memory.Entry) string, out *Outcome) ([]admitted, error) {
	out.NotCaptured = append(out.NotCaptured, d.Skipped...)
	var kept []admitted
	for i, e := range d.Entries {
		if dir := r.optOuts.of(cwdOf(e)); dir != "" {
			out.NotCaptured = append(out.NotCaptured, optedOutBy(dir))
			continue
		}
		identify(e, d.GivenID, d.Dated, i)
		if e.Session() == "" && fallback != nil {
			if s := fallback(e); s != "" {
				if err := memory.CheckNewSessionID(s); err != nil {
					return nil, hint.With(err, memory.SessionIDHint)
				}
				e.SetSession(s)
			}
		}
		defaulted := e.Session() == ""
		if defaulted {
			e.SetSession(r.session)
		}
		e.SetSession(r.policy.SafeSession(e.Session()))
		p, err := journal.Prepare(e)
		if err != nil {
			return nil, err
		}
		kept = append(kept, admitted{p, e.Event != nil, defaulted})
	}
	return kept, nil
}

// cwdOf is the directory the agent worked in when the entry happened, or "".
func cwdOf(e memory.Entry) string {
	if e.Observation != nil {
		return e.Observation.Cwd
	}
	return e.Event.Attrs["cwd"]
}

// write appends entries in one transaction, as o says, and notes in out what became of
// each. Nothing is written when there is nothing to write.
func (r *Recorder) write(entries []admitted, o journal.AppendOptions, out *Outcome) error {
	if len(entries) == 0 && o.Watched == nil {
		return nil
	}
	ps, err := r.prepared(entries)
	if err != nil {
		return err
	}
	o.IdleGap = r.idle
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	appended, err := r.journal.Append(ps, o)
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	note(out, entries, appended)
	return nil
}

// prepared are what the journal is given of entries: a bad session given fails the
// call when an entry would have taken it, and only then.
func (r *Recorder) prepared(entries []admitted) ([]journal.Prepared, error) {
	if r.sessionErr != nil && slices.ContainsFunc(entries, func(e admitted) bool { return e.defaulted }) {
		return nil, r.sessionErr
	}
	ps := make([]journal.Prepared, len(entries))
	for i, e := range entries {
		ps[i] = e.p
	}
	return ps, nil
}

// note notes in out what the journal did with each of entries.
func note(out *Outcome, entries []admitted, appended []journal.Appended) {
	for i, a := range appended {
		out.Recorded = append(out.Recorded, Recorded{ID: a.ID, Event: entries[i].event, Duplicate: a.Duplicate, Spooled: a.Spooled})
	}
}

// optOuts are the opt-out files found above each directory a Recorder asked about: a
// hook's payload names the directory it runs in, and each line of a --jsonl names its
// own, mostly the same few, and each lookup is a stat of every directory up to /.
// Safe for the goroutines decoding lines.
type optOuts struct{ found sync.Map } // directory: the directory of its opt-out file, or ""

// of returns the directory of dir's opt-out file (see capture.OptedOut), or "".
func (c *optOuts) of(dir string) string {
	if dir == "" {
		return ""
	}
	if v, ok := c.found.Load(dir); ok {
		return v.(string)
	}
	found := capture.OptedOut(dir)
	c.found.Store(dir, found)
	return found
}
