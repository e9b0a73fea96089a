// Package recorder is "agmem record": one call's input (a hook payload, native
// observations, one per line with --jsonl, or a call described by flags) decoded,
// filtered by the capture policy, redacted, and appended to the journal in one
// transaction. The agmem binary's record command and agmem-record, the small binary
// agmem's hooks run, both call it; it links no git code, so that agmem-record starts
// fast (see Main).
package recorder

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/agmem/agmem/capture"
	"github.com/agmem/agmem/internal/config"
	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/journal"
	"github.com/agmem/agmem/memory"
)

// Env is what a record reads and writes besides its flags.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
}

// Options are record's flags.
type Options struct {
	JSONL      bool
	Verbose    bool
	Session    string
	Tool       string
	Args       []string
	ArgsJSON   string
	Result     string
	ResultFile string
	Error      string
	MemoryType string
}

// Usage and Description say what record does, for either binary's help.
const (
	Usage       = "append observations to the journal (stdin: a native object or a hook payload)"
	Description = "Reads one JSON object on stdin (a native observation or a Claude Code hook payload),\n" +
		"or one per line with --jsonl, or builds one from --tool and its flags. Prints the id of\n" +
		"each new observation. Calls not worth capturing are skipped silently (see --verbose)."
)

// Flag is one of record's flags, for each binary's command line to define: exactly one
// of Bool, String and Strings (a flag given once per value) is set.
type Flag struct {
	Name, Alias, Usage string
	Bool               *bool
	String             *string
	Strings            *[]string
}

// Flags are record's flags, each writing into o.
func (o *Options) Flags() []Flag {
	return []Flag{
		{Name: "jsonl", Usage: "read one object per line, all in one transaction", Bool: &o.JSONL},
		{Name: "verbose", Alias: "v", Usage: "say on stderr why input was not captured", Bool: &o.Verbose},
		{Name: "session", Usage: "session id for input that names none (default: $AGMEM_SESSION, else agmem's open session)", String: &o.Session},
		{Name: "tool", Usage: "record a call from flags: the tool's name", String: &o.Tool},
		{Name: "arg", Usage: "an argument KEY=VALUE of the call (repeatable)", Strings: &o.Args},
		{Name: "args-json", Usage: "the call's arguments as a JSON object", String: &o.ArgsJSON},
		{Name: "result", Usage: "the call's result text", String: &o.Result},
		{Name: "result-file", Usage: "read the call's result from this file", String: &o.ResultFile},
		{Name: "error", Usage: "the call failed with this error", String: &o.Error},
		{Name: "memory-type", Usage: "episodic, semantic or procedural (default: classified from the tool name)", String: &o.MemoryType},
	}
}

// Run records what o and e's stdin describe into repo's journal, and prints the id of
// each new observation.
func Run(e Env, repo memrepo.Repo, o Options) error {
	cfg, err := config.Load(repo.StateDir(), e.Getenv)
	if err != nil {
		return hint.With(err, `"agmem config" shows every key and where its value comes from`)
	}
	if !cfg.Enabled {
		return notCaptured(e, o, "capture.enabled is false")
	}
	var seen optOuts
	if dir := seen.ofWorkingDir(); dir != "" {
		return notCaptured(e, o, "opted out by "+filepath.Join(dir, capture.OptOutFile))
	}
	policy, err := cfg.Policy()
	if err != nil {
		return hint.With(err, `"agmem config" shows every key and where its value comes from`)
	}
	session := cmp.Or(o.Session, e.Getenv("AGMEM_SESSION"))
	// A bad session id is reported once the opt-outs are known: an opted-out project's
	// hook stays silent whatever it is given.
	var sessionErr error
	if session != "" {
		if err := memory.CheckSessionID(session); err != nil {
			sessionErr, session = hint.With(err, "pass a session id without control characters"), ""
		}
	}
	now := time.Now()
	var decoded capture.Decoded
	var lines decodedLines
	switch {
	case o.Tool != "":
		n, err := nativeFromFlags(o)
		if err != nil {
			return err
		}
		if decoded, err = capture.FromNative(n, policy, now); err != nil {
			return hint.With(err, `run "agmem record --help"`)
		}
	case o.JSONL:
		var err error
		lines, err = decodeLines(e.Stdin, policy, cfg.MaxInput, now, session, &seen, repo.Journal())
		if lines.staging != nil {
			defer lines.staging.Close() // drops what was staged, unless appended
		}
		if err != nil {
			return err
		}
		decoded.Skipped = lines.skipped
	default:
		data, err := readStdin(e.Stdin, cfg.MaxInput)
		if err != nil {
			return err
		}
		if decoded, err = capture.Decode(data, policy, now); err != nil {
			return hint.With(err, "give a native object {\"tool_name\", \"arguments\", \"result\"} or a hook payload")
		}
	}
	for _, en := range decoded.Entries {
		p, optedOut, err := admit(en, session, &seen)
		if err != nil {
			return err
		}
		if optedOut != "" {
			return notCaptured(e, o, "opted out by "+filepath.Join(optedOut, capture.OptOutFile))
		}
		lines.entries = append(lines.entries, p)
	}
	bad := lines.bad
	for _, why := range bad {
		fmt.Fprintln(e.Stderr, "agmem: "+why)
	}
	if o.Verbose {
		for _, why := range decoded.Skipped {
			fmt.Fprintln(e.Stderr, "agmem: not captured: "+why)
		}
	}
	if lines.optedOut != "" {
		return notCaptured(e, o, "opted out by "+filepath.Join(lines.optedOut, capture.OptOutFile))
	}
	if sessionErr != nil {
		return sessionErr
	}

	if len(lines.entries) > 0 {
		record := repo.Journal().AppendPrepared
		if lines.staging != nil {
			// The last part too: the last transaction then holds only the indexes.
			if err := lines.stage(repo.Journal(), now); err != nil {
				return err
			}
			record = lines.staging.Append
		}
		appended, err := record(lines.entries, cfg.SessionIdle, now)
		if err != nil {
			return fmt.Errorf("record: %w", err)
		}
		var out bytes.Buffer
		for i, a := range appended {
			switch {
			case a.Duplicate:
				if o.Verbose {
					fmt.Fprintf(e.Stderr, "agmem: already recorded: %s\n", a.ID)
				}
			case lines.entries[i].Observation():
				out.WriteString(a.ID)
				out.WriteByte('\n')
			}
		}
		e.Stdout.Write(out.Bytes())
	}
	if len(bad) > 0 {
		return hint.With(fmt.Errorf("%d line(s) were not recorded; the other lines were", len(bad)),
			"fix the lines named above and record them again; recording a line twice keeps it once")
	}
	return nil
}

// notCaptured ends a record that captures nothing by choice: exit 0, a reason with -v.
func notCaptured(e Env, o Options, why string) error {
	if o.Verbose {
		fmt.Fprintln(e.Stderr, "agmem: not captured: "+why)
	}
	return nil
}

// admit readies a captured entry for the journal: in session if it names none, and
// encoded now rather than in the journal's transaction. optedOut is the directory of
// an opt-out file above the directory the entry happened in, if there is one.
func admit(en memory.Entry, session string, seen *optOuts) (p journal.Prepared, optedOut string, err error) {
	if dir := seen.of(entryCwd(en)); dir != "" {
		return p, dir, nil
	}
	if session != "" && en.Session() == "" {
		en.SetSession(session)
	}
	p, err = journal.Prepare(en)
	return p, "", err
}

// entryCwd is the directory the agent worked in when the entry happened, or "".
func entryCwd(en memory.Entry) string {
	if en.Observation != nil {
		return en.Observation.Cwd
	}
	return en.Event.Attrs["cwd"]
}

// optOuts are the opt-out files found above each directory a record asked about: a
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

// ofWorkingDir is of for the working directory.
func (c *optOuts) ofWorkingDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	return c.of(wd)
}

// readStdin reads one object of at most limit bytes: a larger one is refused, not a
// reason to run out of memory in an agent's hook.
func readStdin(r io.Reader, limit int) ([]byte, error) {
	if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return nil, hint.With(errors.New("no input: stdin is a terminal"),
				`pipe a JSON object into "agmem record", or use "agmem record --tool NAME"`)
		}
	}
	data, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("read stdin: %w", err)
	}
	if len(data) > limit {
		return nil, hint.With(fmt.Errorf("input is larger than %s; nothing was recorded", sizeName(limit)),
			"capture.max_input_bytes raises the bound; a large value is cut to capture.max_value_bytes once read")
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, hint.With(errors.New("no input on stdin"),
			`pipe a JSON object into "agmem record", or use "agmem record --tool NAME"`)
	}
	return data, nil
}

func sizeName(n int) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// decodedLines is what --jsonl input held: its entries readied for the journal, what
// was not captured and why, the bad lines, and an opt-out file that applies. Of a large
// input, most entries are staged already (see stagePart).
type decodedLines struct {
	entries  []journal.Prepared
	skipped  []string
	bad      []string
	optedOut string
	staging  *journal.Staging // nil until a part is staged
	staged   int              // entries[:staged] went to the staging
	unstaged int              // bytes of encoded entries in entries[staged:]
}

// stagePart is how many bytes of encoded entries a --jsonl holds before it stores them
// in the journal, in a part that no reader sees before the last transaction indexes it
// with the others (journal.Staging): memory follows the part, not the input.
const stagePart = 8 << 20

// stage stores the entries not staged yet as a part of a staging, started if need be.
func (all *decodedLines) stage(j *journal.Journal, now time.Time) error {
	if all.staging == nil {
		s, err := j.StartStaging(now)
		if err != nil {
			return fmt.Errorf("record: %w", err)
		}
		all.staging = s
	}
	if err := all.staging.Stage(all.entries[all.staged:]); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	all.staged, all.unstaged = len(all.entries), 0
	return nil
}

// decodeLines reads --jsonl input: every good line is kept, every bad one reported by
// its line number. A line longer than limit is read past, not kept. Lines are read a
// chunk at a time, each chunk decoded and admitted by one of a worker per core, and
// collected in their order; only their encoded entries stay, and once they fill a part,
// only what j's last transaction needs of them. A part is staged while the next chunks
// are decoded.
func decodeLines(r io.Reader, p capture.Policy, limit int, now time.Time, session string, seen *optOuts, j *journal.Journal) (decodedLines, error) {
	workers := runtime.GOMAXPROCS(0)
	jobs := make(chan decodeJob)
	inOrder := make(chan decodeJob, 2*workers) // bounds the chunks read and not collected
	quit := make(chan struct{})
	defer close(quit)
	for range workers {
		go func() {
			for job := range jobs {
				results := make([]lineResult, len(job.lines))
				for i, l := range job.lines {
					if l.long {
						results[i] = lineResult{err: fmt.Errorf("longer than %s", sizeName(limit))}
						continue
					}
					results[i] = safely(func() lineResult { return decodeLine(l.line, p, now, session, seen) })
					job.lines[i].line = nil // only its number is needed from now on
				}
				job.done <- results
			}
		}()
	}
	readErr := make(chan error, 1)
	go func() {
		defer close(inOrder)
		defer close(jobs)
		br := bufio.NewReaderSize(r, 1<<20)
		var chunk []numberedLine
		size := 0
		for n := 1; ; n++ {
			line, long, err := readLine(br, limit)
			if long || len(bytes.TrimSpace(line)) > 0 {
				chunk = append(chunk, numberedLine{n, line, long})
				size += len(line)
			}
			if len(chunk) == decodeChunk || size >= decodeChunkBytes || err != nil && len(chunk) > 0 {
				job := decodeJob{chunk, make(chan []lineResult, 1)}
				select {
				case inOrder <- job:
				case <-quit:
					return
				}
				jobs <- job
				chunk, size = nil, 0
			}
			if err != nil {
				if err != io.EOF {
					readErr <- fmt.Errorf("read stdin: %w", err)
				}
				return
			}
		}
	}()

	var all decodedLines
	for job := range inOrder {
		for i, res := range <-job.done {
			if res.err != nil {
				all.bad = append(all.bad, fmt.Sprintf("line %d: %s", job.lines[i].n, res.err))
				continue
			}
			all.skipped = append(all.skipped, res.skipped...)
			all.optedOut = cmp.Or(all.optedOut, res.optedOut)
			if all.optedOut != "" {
				// The call records nothing: what it staged is dropped when it ends.
				all.entries, all.staged, all.unstaged = nil, 0, 0
				continue
			}
			all.entries = append(all.entries, res.entries...)
			for _, e := range res.entries {
				all.unstaged += e.Size()
			}
		}
		if all.unstaged >= stagePart && all.optedOut == "" {
			if err := all.stage(j, now); err != nil {
				return all, err
			}
		}
	}
	select {
	case err := <-readErr:
		return all, err
	default:
		return all, nil
	}
}

// A worker decodes a chunk of decodeChunk lines at once, or fewer that hold
// decodeChunkBytes: the chunks in flight, two per worker, hold a bounded part of the
// input whatever its lines' length.
const (
	decodeChunk      = 256
	decodeChunkBytes = 1 << 20
)

// decodeJob is a chunk of lines, and where the worker that decodes them puts the results.
type decodeJob struct {
	lines []numberedLine
	done  chan []lineResult
}

type numberedLine struct {
	n    int
	line []byte
	long bool // longer than the limit: read past, not kept
}

type lineResult struct {
	entries  []journal.Prepared
	skipped  []string
	optedOut string
	err      error
}

// decodeLine decodes and admits one line: a line whose entries cannot all be admitted
// is a bad line, recorded not at all.
func decodeLine(line []byte, p capture.Policy, now time.Time, session string, seen *optOuts) lineResult {
	d, err := capture.Decode(line, p, now)
	if err != nil {
		return lineResult{err: err}
	}
	res := lineResult{skipped: d.Skipped}
	for _, en := range d.Entries {
		pr, optedOut, err := admit(en, session, seen)
		if err != nil {
			return lineResult{err: err}
		}
		if optedOut != "" {
			return lineResult{optedOut: optedOut}
		}
		res.entries = append(res.entries, pr)
	}
	return res
}

// safely runs decode, in a worker goroutine: a panic there would pass Main's recover by
// and exit 2, which agents read as "block". It makes the line a bad one instead,
// reported with the others.
func safely(decode func() lineResult) (res lineResult) {
	defer func() {
		if v := recover(); v != nil {
			res = lineResult{err: fmt.Errorf("internal error: %v", v)}
		}
	}()
	return decode()
}

// readLine reads one line of at most limit bytes; of a longer one it keeps nothing and
// says so.
func readLine(br *bufio.Reader, limit int) (line []byte, long bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !long {
			if len(line)+len(chunk) > limit+1 { // +1: the newline
				long, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err != bufio.ErrBufferFull {
			return line, long, err
		}
	}
}

func nativeFromFlags(o Options) (capture.Native, error) {
	args := map[string]json.RawMessage{}
	if o.ArgsJSON != "" {
		if err := json.Unmarshal([]byte(o.ArgsJSON), &args); err != nil {
			return capture.Native{}, hint.With(fmt.Errorf("--args-json: %w", err), `give a JSON object, e.g. --args-json '{"path":"a.go"}'`)
		}
	}
	for _, kv := range o.Args {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return capture.Native{}, hint.With(fmt.Errorf("--arg %q is not KEY=VALUE", kv), `e.g. --arg path=README.md`)
		}
		args[k], _ = json.Marshal(v)
	}
	rawArgs, _ := json.Marshal(args)
	n := capture.Native{ToolName: &o.Tool, Arguments: rawArgs, Source: capture.SourceFlags,
		MemoryType: o.MemoryType, Error: o.Error, SessionID: o.Session}
	if o.MemoryType != "" {
		if _, ok := memory.ParseType(o.MemoryType); !ok {
			return n, hint.With(fmt.Errorf("--memory-type %q is not a memory type", o.MemoryType), "use episodic, semantic or procedural")
		}
	}
	result := o.Result
	if o.ResultFile != "" {
		if o.Result != "" {
			return n, errors.New("--result and --result-file are exclusive")
		}
		data, err := os.ReadFile(o.ResultFile)
		if err != nil {
			return n, fmt.Errorf("--result-file: %w", err)
		}
		result = string(data)
	}
	if o.Error != "" && result == "" {
		result = o.Error
	}
	if result != "" {
		n.Result, _ = json.Marshal(result)
	}
	return n, nil
}
