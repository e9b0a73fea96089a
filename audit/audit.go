// Package audit owns agmem audit: the offline check of a memory repo's history that a
// reviewer of an agent's work can run from any clone. Along the first-parent history of
// the branch (and of every fetched agents/* branch) it checks that
//
//   - each commit that carries agmem's trailers is signed by an allowed signer (when the
//     repo signs), holds exactly the files a flush writes — the batch's session record
//     and one markdown file per observation, added, never changed — and carries exactly
//     the trailers that record gives;
//   - no other commit adds, changes or deletes what agmem wrote;
//   - the branch holds, in the same order and unchanged, every commit the journal's
//     ledger says this repo committed, and no agmem commit after the ledger's first
//     that the ledger does not know;
//
// and it reports, per session, what was redacted (rule names and counts, never what was
// hidden) and the context agmem gave the agent at its start, where that was recorded.
package audit

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/agmem/agmem/flush"
	"github.com/agmem/agmem/journal"
	"github.com/agmem/agmem/maintain"
	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/redact"
	"github.com/agmem/agmem/render"
	"github.com/agmem/agmem/sign"
	"github.com/agmem/agmem/vcs"
)

// Report is what agmem audit found.
type Report struct {
	Branch     string              `json:"branch"`
	Tip        string              `json:"tip"`
	Since      *time.Time          `json:"since,omitempty"`
	Signing    string              `json:"signing"` // how this repo signs: "off", or the mode and key
	Allowed    string              `json:"allowed_signers,omitempty"`
	Ledger     int                 `json:"ledger"` // commits the journal knows it wrote
	Commits    []Commit            `json:"commits"`
	Others     int                 `json:"other_commits"` // commits agmem did not write
	Sessions   []*Session          `json:"sessions"`
	Problems   []Problem           `json:"problems"`
	Signatures map[sign.Status]int `json:"signatures"`
}

// Commit is one commit agmem wrote (or that claims to be agmem's), as the audit found it.
type Commit struct {
	Commit       string     `json:"commit"`
	Origin       string     `json:"origin"` // "local", or the fetched branch
	Time         time.Time  `json:"time"`
	Session      string     `json:"session_id"`
	Batch        string     `json:"batch"`
	Observations int        `json:"observations"`
	Events       int        `json:"events"`
	Signature    sign.Check `json:"signature"`
	InLedger     bool       `json:"in_ledger"`
}

// Problem is one thing the audit found wrong.
type Problem struct {
	Commit string `json:"commit,omitempty"`
	Origin string `json:"origin,omitempty"`
	Kind   string `json:"kind"` // signature, files, trailers, record, changed, chain
	What   string `json:"what"`
}

// Session is what the audit read of one session's records.
type Session struct {
	ID           string         `json:"session_id"`
	Origin       string         `json:"origin"`
	Agent        string         `json:"agent,omitempty"`
	Commits      int            `json:"commits"`
	Observations int            `json:"observations"`
	Events       int            `json:"events"`
	First        time.Time      `json:"first"`
	Last         time.Time      `json:"last"`
	Redactions   int            `json:"redactions"`
	Redacted     map[string]int `json:"redacted,omitempty"` // rule → count of its marks
	Context      []Context      `json:"context,omitempty"`
}

// Context is what agmem told the agent when a session started.
type Context struct {
	At    time.Time `json:"at"`
	Chars int       `json:"chars"`
	Cited []string  `json:"cited,omitempty"` // the ids of the entries it cited
	Text  string    `json:"text"`
}

// Failed reports whether the audit found anything wrong.
func (r *Report) Failed() bool { return len(r.Problems) > 0 }

// Options are what to audit.
type Options struct {
	// Tip is the branch's tip to audit from; zero: the tip as it is now. Read it with
	// the ledger under the flush lock, so that both tell of the same flushes.
	Tip plumbing.Hash
	// Since leaves out the commits of each line of history before the first one made at
	// or after it, or dated before its parent (by position: a later commit whose date
	// says older is audited all the same); zero: the whole history.
	Since time.Time
	// RequireSigned makes every unsigned agmem commit a problem, on every branch.
	RequireSigned bool
	// Ledger is what the journal knows it committed, oldest first; nil when there is no
	// journal (a clone): the chain is then held to signatures and records alone.
	Ledger []journal.Committed
	// Unfinished are the batches the journal holds that a flush has not finished: a
	// commit of one is on the branch before the ledger names it.
	Unfinished []string
}

// Run audits repo, whose commits are signed as settings say.
func Run(repo *vcs.Git, settings sign.Settings, o Options) (*Report, error) {
	branch, err := repo.Branch()
	if err != nil {
		return nil, err
	}
	tip := o.Tip
	if tip.IsZero() {
		if tip, err = repo.Tip(branch); err != nil {
			return nil, err
		}
	}
	verifier, err := settings.Verifier()
	if err != nil {
		return nil, err
	}
	a := &auditor{repo: repo, verifier: verifier, signing: settings.On(), requireSigned: o.RequireSigned,
		since: o.Since, audited: map[plumbing.Hash]bool{}, sessions: map[string]*Session{},
		report: &Report{Branch: branch.Short(), Tip: tip.String(), Signing: string(settings.Mode),
			Allowed: settings.AllowedSigners, Ledger: len(o.Ledger), Commits: []Commit{}, Sessions: []*Session{},
			Problems: []Problem{}, Signatures: map[sign.Status]int{}}}
	if settings.On() {
		a.report.Signing += " (" + settings.Describe() + ")"
	}
	if !o.Since.IsZero() {
		a.report.Since = &o.Since
	}
	replaced, err := repo.Replacements()
	if err != nil {
		return nil, err
	}
	for _, name := range replaced {
		commit, isRef := strings.CutPrefix(name, "refs/replace/")
		if !isRef {
			commit = "" // info/grafts names no one commit
		}
		a.problem(commit, "local", "replaced",
			"%s makes git show another object than the one committed, which agmem reads (git replace -d; for info/grafts, remove it)", name)
	}
	local, err := a.line("local", tip)
	if err != nil {
		return nil, err
	}
	a.chain(local, o.Ledger, o.Unfinished)
	fetched, err := repo.FetchedAgents("")
	if err != nil {
		return nil, err
	}
	for _, f := range fetched {
		if _, err := a.line(f.Name(), f.Tip); err != nil {
			return nil, err
		}
	}
	for _, s := range a.sessions {
		a.report.Sessions = append(a.report.Sessions, s)
	}
	slices.SortFunc(a.report.Sessions, func(x, y *Session) int {
		return cmp.Or(x.First.Compare(y.First), strings.Compare(x.ID, y.ID), strings.Compare(x.Origin, y.Origin))
	})
	return a.report, nil
}

type auditor struct {
	repo          *vcs.Git
	verifier      *sign.Verifier
	signing       bool // the repo signs: an unsigned agmem commit of its branch is a problem
	requireSigned bool // an unsigned agmem commit of any branch is a problem
	// signedLine says an agmem commit of the line of history being read was signed: an
	// unsigned one after it is a problem (rebased, amended, or signing failed).
	signedLine bool
	since      time.Time
	audited    map[plumbing.Hash]bool // a commit two branches share is audited once
	sessions   map[string]*Session    // origin \x00 session id
	report     *Report
}

// seen is an agmem commit of a line of history, for the chain check.
type seen struct {
	hash  string
	batch string
}

func (a *auditor) problem(commit, origin, kind, format string, args ...any) {
	a.report.Problems = append(a.report.Problems, Problem{Commit: commit, Origin: origin, Kind: kind,
		What: fmt.Sprintf(format, args...)})
}

// claimsAgmem reports whether a trailer block says agmem wrote its commit.
func claimsAgmem(trailers []vcs.Trailer) bool {
	return slices.ContainsFunc(trailers, func(t vcs.Trailer) bool {
		return strings.HasPrefix(strings.ToLower(t.Key), "agmem-")
	})
}

// line audits the first-parent history of tip, and what its merges bring in, and
// returns the agmem commits of the first-parent line in order.
func (a *auditor) line(origin string, tip plumbing.Hash) ([]seen, error) {
	hashes, err := a.repo.FirstParents(tip)
	if err != nil {
		return nil, err
	}
	onLine := map[plumbing.Hash]bool{}
	for _, h := range hashes {
		onLine[h] = true
	}
	var out []seen
	a.signedLine = false
	checking := a.since.IsZero()
	var parentWhen time.Time // of the commit before on the line
	for _, h := range hashes {
		c, err := a.repo.Commit(h)
		if err != nil {
			return nil, fmt.Errorf("read commit %s: %w", h, err)
		}
		trailers := vcs.ParseTrailers(c.Message)
		if claimsAgmem(trailers) {
			out = append(out, seen{hash: h.String(), batch: vcs.TrailerValue(trailers, vcs.TrailerBatch)})
		}
		// A commit dated before its parent says a date that whoever wrote it chose.
		checking = checking || !c.Committer.When.Before(a.since) || c.Committer.When.Before(parentWhen)
		parentWhen = c.Committer.When
		if !checking || a.audited[h] {
			continue
		}
		// What a merge brings in is audited first, as the history it is; the merge may
		// then add what those commits added, and nothing else of agmem's.
		var brought map[string]bool
		if len(c.ParentHashes) > 1 {
			if brought, err = a.mergedIn(origin, c, onLine); err != nil {
				return nil, err
			}
		}
		if _, err := a.commit(origin, c, trailers, brought); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// commit audits one commit: agmem's, or another's whose changes to agmem's paths may
// only be the adds of brought. It returns what the commit changed.
func (a *auditor) commit(origin string, c *object.Commit, trailers []vcs.Trailer, brought map[string]bool) ([]vcs.PathChange, error) {
	a.audited[c.Hash] = true
	changes, err := a.repo.PathChanges(c)
	if err != nil {
		// A tree go-git cannot compare (a ".." in it, a missing object) is this
		// commit's problem, not the end of the audit.
		a.problem(c.Hash.String(), origin, "files", "its files cannot be read: %v", err)
		return nil, nil
	}
	switch {
	case !claimsAgmem(trailers):
		a.report.Others++
		a.others(origin, c, changes, brought)
	case len(c.ParentHashes) > 1:
		a.problem(c.Hash.String(), origin, "files", "a merge with agmem's trailers: agmem never merges")
	default:
		err = a.agmemCommit(origin, c, trailers, changes)
	}
	return changes, err
}

// mergedIn audits the commits merge brings in (those of its other parents not on the
// line, ancestors first) as a history of their own, and returns the paths their agmem
// commits added.
func (a *auditor) mergedIn(origin string, merge *object.Commit, onLine map[plumbing.Hash]bool) (map[string]bool, error) {
	var order []plumbing.Hash // ancestors before descendants
	visited := map[plumbing.Hash]bool{}
	var visit func(h plumbing.Hash) error
	visit = func(h plumbing.Hash) error {
		if visited[h] || onLine[h] || a.audited[h] {
			return nil
		}
		visited[h] = true
		c, err := a.repo.Commit(h)
		if err != nil {
			return fmt.Errorf("read commit %s: %w", h, err)
		}
		for _, p := range c.ParentHashes {
			if err := visit(p); err != nil {
				return err
			}
		}
		order = append(order, h)
		return nil
	}
	for _, p := range merge.ParentHashes[1:] {
		if err := visit(p); err != nil {
			return nil, err
		}
	}
	brought := map[string]bool{}
	via := origin + ", merged by " + vcs.Short(merge.Hash.String())
	outer := a.signedLine
	a.signedLine = false
	defer func() { a.signedLine = outer }()
	for _, h := range order {
		c, err := a.repo.Commit(h)
		if err != nil {
			return nil, fmt.Errorf("read commit %s: %w", h, err)
		}
		trailers := vcs.ParseTrailers(c.Message)
		changes, err := a.commit(via, c, trailers, nil)
		if err != nil {
			return nil, err
		}
		if !claimsAgmem(trailers) {
			continue
		}
		for _, ch := range changes {
			if ch.Action == "add" {
				brought[ch.Path] = true
			}
		}
	}
	return brought, nil
}

// agmemPath reports whether path is one agmem writes.
func agmemPath(path string) bool {
	return strings.HasPrefix(path, "current/") || strings.HasPrefix(path, render.SessionsDir+"/")
}

// others checks a commit agmem did not write: it may change anything but what agmem
// wrote, and a merge may add what the agmem commits it brings in added (brought).
func (a *auditor) others(origin string, c *object.Commit, changes []vcs.PathChange, brought map[string]bool) {
	for _, ch := range changes {
		if agmemPath(ch.Path) && !(ch.Action == "add" && brought[ch.Path]) {
			a.problem(c.Hash.String(), origin, "changed", "a commit agmem did not write (no agmem trailers) %s %s",
				verbs[ch.Action], ch.Path)
		}
	}
}

// verbs say what a commit did to a path, for a sentence.
var verbs = map[string]string{"add": "adds", "change": "changes", "delete": "deletes"}

// agmemCommit checks a commit that carries agmem's trailers.
func (a *auditor) agmemCommit(origin string, c *object.Commit, trailers []vcs.Trailer, changes []vcs.PathChange) error {
	h := c.Hash.String()
	session, batch := vcs.TrailerValue(trailers, vcs.TrailerSession), vcs.TrailerValue(trailers, vcs.TrailerBatch)
	rc := Commit{Commit: h, Origin: origin, Time: c.Committer.When.UTC(), Session: session, Batch: batch}

	sig, payload, err := vcs.SignedPayload(c)
	if err != nil {
		return err
	}
	rc.Signature = a.verifier.Check(payload, sig, c.Committer.When)
	a.report.Signatures[rc.Signature.Status]++
	defer func() { a.signedLine = a.signedLine || sig != nil }()
	switch rc.Signature.Status {
	case sign.Good:
	case sign.Unsigned:
		switch {
		case a.requireSigned:
			a.problem(h, origin, "signature", "not signed (--require-signed)")
		case a.signing && (origin == "local" || strings.HasPrefix(origin, "local, merged by ")):
			// Merged into this repo's branch, it is of its history as its own are.
			a.problem(h, origin, "signature", "not signed, though this repo signs its commits")
		case a.signedLine:
			a.problem(h, origin, "signature", "not signed, though agmem's commits before it are")
		}
	default:
		a.problem(h, origin, "signature", "%s signature: %s", rc.Signature.Status, rc.Signature.Reason)
	}

	entries, parts, ok := a.record(origin, c, session, batch, changes)
	if ok {
		obs, events := countEntries(entries)
		rc.Observations, rc.Events = obs, events
		if err := a.files(origin, c, entries, parts, changes); err != nil {
			return err
		}
		want := flush.Trailers(session, batch, entries, vcs.TrailerValue(trailers, vcs.TrailerMessageModel))
		if diff := trailerDiff(want, trailers); diff != "" {
			a.problem(h, origin, "trailers", "the trailers do not say what the session record holds: %s", diff)
		}
		a.session(origin, session, entries)
	}
	a.report.Commits = append(a.report.Commits, rc)
	return nil
}

// record reads the batch's session record from the commit, which must add it.
func (a *auditor) record(origin string, c *object.Commit, session, batch string, changes []vcs.PathChange) (entries []memory.Entry, parts []string, ok bool) {
	h := c.Hash.String()
	if session == "" || batch == "" {
		a.problem(h, origin, "trailers", "agmem trailers without %s and %s", vcs.TrailerSession, vcs.TrailerBatch)
		return nil, nil, false
	}
	entries, parts, err := maintain.ReadRecord(a.repo, c, session, batch)
	switch {
	case err != nil:
		a.problem(h, origin, "record", "%v", err)
		return nil, nil, false
	case parts == nil || !slices.ContainsFunc(changes, func(ch vcs.PathChange) bool { return ch.Path == parts[0] && ch.Action == "add" }):
		a.problem(h, origin, "record", "the commit does not add its session record %s", render.CurrentLayout.SessionRecordPath(session, batch))
		return nil, nil, false
	}
	for _, e := range entries {
		if e.Session() != session {
			a.problem(h, origin, "record", "%s holds an entry of session %q, not %q", parts[0], e.Session(), session)
			return nil, nil, false
		}
	}
	return entries, parts, true
}

// files checks that the commit adds exactly the record's parts and one markdown file
// per observation, each as agmem renders it, and changes nothing; the first commit of
// a flush into a repo that did not say its layout adds render.LayoutFile too.
func (a *auditor) files(origin string, c *object.Commit, entries []memory.Entry, parts []string, changes []vcs.PathChange) error {
	h := c.Hash.String()
	want := map[string]*memory.Observation{}
	for _, e := range entries {
		if o := e.Observation; o != nil {
			for _, f := range render.Forms {
				want[f.Path(o)] = o
			}
		}
	}
	markdown := 0
	for _, ch := range changes {
		switch o := want[ch.Path]; {
		case ch.Action != "add":
			a.problem(h, origin, "files", "%s %s: agmem only adds files", verbs[ch.Action], ch.Path)
		case slices.Contains(parts, ch.Path):
		case ch.Path == render.LayoutFile:
			data, err := a.repo.ReadBlob(ch.Blob)
			if err != nil {
				return fmt.Errorf("read %s in %s: %w", ch.Path, h, err)
			}
			if !bytes.Equal(data, render.CurrentLayout.File()) && !bytes.Equal(data, render.Layout1.File()) {
				a.problem(h, origin, "files", "adds %s holding %q, a layout agmem does not write", ch.Path, data)
			}
		case o != nil:
			markdown++
			// What agents read back: it must say what the record holds, and no more.
			data, err := a.repo.ReadBlob(ch.Blob)
			if err != nil {
				return fmt.Errorf("read %s in %s: %w", ch.Path, h, err)
			}
			if !bytes.Equal(data, render.Markdown(o)) {
				a.problem(h, origin, "files", "%s is not the markdown of observation %s of its session record", ch.Path, o.ID)
			}
		default:
			a.problem(h, origin, "files", "adds %s, which is neither its session record nor an observation of it", ch.Path)
		}
	}
	if obs, _ := countEntries(entries); markdown != obs {
		a.problem(h, origin, "files", "adds %d markdown files for the %d observations of its session record", markdown, obs)
	}
	return nil
}

// laterTrailers are the keys agmem began to write after its first commits: a commit
// of an older agmem lacks them.
var laterTrailers = []string{vcs.TrailerSource, vcs.TrailerRedactions, vcs.TrailerMessageModel}

// trailerDiff says how got differs from want, "" when they agree.
func trailerDiff(want, got []vcs.Trailer) string {
	var diffs []string
	has := func(list []vcs.Trailer, key string) bool {
		return slices.ContainsFunc(list, func(t vcs.Trailer) bool { return strings.EqualFold(t.Key, key) })
	}
	for _, w := range want {
		if !has(got, w.Key) && slices.Contains(laterTrailers, w.Key) {
			continue
		}
		if value, g := vcs.OneLine(w.Value), vcs.TrailerValue(got, w.Key); g != value {
			diffs = append(diffs, fmt.Sprintf("%s is %q, the record says %q", w.Key, g, value))
		}
	}
	for _, g := range got {
		if !has(want, g.Key) {
			diffs = append(diffs, fmt.Sprintf("%s is not a trailer agmem writes", g.Key))
		}
	}
	if len(diffs) == 0 && slices.ContainsFunc(got, func(g vcs.Trailer) bool {
		return vcs.TrailerValue(got, g.Key) != g.Value
	}) {
		diffs = append(diffs, "a trailer is there twice")
	}
	return strings.Join(diffs, "; ")
}

func countEntries(entries []memory.Entry) (obs, events int) {
	for _, e := range entries {
		if e.Observation != nil {
			obs++
		} else {
			events++
		}
	}
	return obs, events
}

// session adds what a commit's record holds to its session's report.
func (a *auditor) session(origin, id string, entries []memory.Entry) {
	key := origin + "\x00" + id
	s := a.sessions[key]
	if s == nil {
		s = &Session{ID: id, Origin: origin, Redacted: map[string]int{}}
		a.sessions[key] = s
	}
	s.Commits++
	for _, e := range entries {
		t := e.Time().UTC()
		if s.First.IsZero() || t.Before(s.First) {
			s.First = t
		}
		if t.After(s.Last) {
			s.Last = t
		}
		if s.Agent == "" {
			s.Agent = e.Source()
		}
		switch o := e.Observation; {
		case o != nil:
			s.Observations++
			s.Redactions += o.Redactions
			// Not the summary: it is made of the arguments, and copies their marks.
			for _, text := range []string{string(o.Arguments), string(o.Result), o.Error} {
				s.countMarks(text)
			}
		default:
			s.Events++
			s.Redactions += e.Event.Redactions
			s.countMarks(e.Event.Text)
			for _, v := range e.Event.Attrs {
				s.countMarks(v)
			}
			if e.Event.Name == memory.ContextGiven {
				s.Context = append(s.Context, Context{At: t, Chars: len([]rune(e.Event.Text)),
					Cited: strings.Fields(e.Event.Attrs["cited"]), Text: e.Event.Text})
			}
		}
	}
}

// countMarks counts the redaction marks in text by rule.
func (s *Session) countMarks(text string) {
	for _, rule := range redact.MarkRules(text) {
		s.Redacted[rule]++
	}
}

// chain holds the local branch's agmem commits against the journal's ledger: each
// commit the ledger names must be there as it was, in the ledger's order, and no agmem
// commit after the ledger's first may be one it does not know, but a commit of a batch
// a flush has not finished (unfinished), which the ledger does not name yet.
func (a *auditor) chain(history []seen, ledger []journal.Committed, unfinished []string) {
	if len(ledger) == 0 {
		return
	}
	known := map[string]bool{} // commits the ledger names
	place := map[string]int{}  // batch → its place in the ledger
	for i, l := range ledger {
		known[l.Commit] = true
		place[l.Batch] = i
	}
	now := map[string]string{} // batch → the commit the history holds it in
	started, last := false, -1
	for _, s := range history {
		now[s.batch] = s.hash
		i, ours := place[s.batch]
		if !ours {
			if started && !slices.Contains(unfinished, s.batch) {
				a.problem(s.hash, "local", "chain", "the journal never committed it (batch %s): not written by this repo's agmem", s.batch)
			}
			continue // older than the ledger
		}
		started = true
		if i < last {
			a.problem(s.hash, "local", "chain", "out of order: the journal committed batch %s before batch %s", s.batch, ledger[last].Batch)
		}
		last = max(last, i)
	}
	for i := range a.report.Commits {
		c := &a.report.Commits[i]
		c.InLedger = c.Origin == "local" && known[c.Commit]
	}
	for _, l := range ledger {
		switch h, ok := now[l.Batch]; {
		case ok && h == l.Commit:
		case l.At.Before(a.since):
		case ok:
			a.problem(h, "local", "chain", "rewritten: the journal committed batch %s of session %s as %s", l.Batch, l.Session, vcs.Short(l.Commit))
		default:
			a.problem(l.Commit, "local", "chain", "dropped: the journal committed it (session %s, batch %s), and the branch no longer holds it", l.Session, l.Batch)
		}
	}
}
