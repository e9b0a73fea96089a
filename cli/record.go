package cli

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

	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/capture"
	"github.com/agmem/agmem/config"
	"github.com/agmem/agmem/journal"
	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/memrepo"
)

type recordOptions struct {
	jsonl      bool
	verbose    bool
	session    string
	tool       string
	args       []string
	argsJSON   string
	result     string
	resultFile string
	errorText  string
	memoryType string
}

func newRecordCommand(e *env) *ucli.Command {
	var o recordOptions
	return &ucli.Command{
		Name:  "record",
		Usage: "append observations to the journal (stdin: a native object or a hook payload)",
		Description: "Reads one JSON object on stdin (a native observation or a Claude Code hook payload),\n" +
			"or one per line with --jsonl, or builds one from --tool and its flags. Prints the id of\n" +
			"each new observation. Calls not worth capturing are skipped silently (see --verbose).",
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "jsonl", Usage: "read one object per line, all in one transaction", Destination: &o.jsonl},
			&ucli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "say on stderr why input was not captured", Destination: &o.verbose},
			&ucli.StringFlag{Name: "session", Usage: "session id for input that names none (default: $AGMEM_SESSION, else agmem's open session)", Destination: &o.session},
			&ucli.StringFlag{Name: "tool", Usage: "record a call from flags: the tool's name", Destination: &o.tool},
			&ucli.StringSliceFlag{Name: "arg", Usage: "an argument KEY=VALUE of the call (repeatable)"},
			&ucli.StringFlag{Name: "args-json", Usage: "the call's arguments as a JSON object", Destination: &o.argsJSON},
			&ucli.StringFlag{Name: "result", Usage: "the call's result text", Destination: &o.result},
			&ucli.StringFlag{Name: "result-file", Usage: "read the call's result from this file", Destination: &o.resultFile},
			&ucli.StringFlag{Name: "error", Usage: "the call failed with this error", Destination: &o.errorText},
			&ucli.StringFlag{Name: "memory-type", Usage: "episodic, semantic or procedural (default: classified from the tool name)", Destination: &o.memoryType},
		},
		Action: onRepo(e, func(c *ucli.Context, repo memrepo.Repo) error {
			o.args = c.StringSlice("arg")
			return runRecord(e, repo, o)
		}),
	}
}

func runRecord(e *env, repo memrepo.Repo, o recordOptions) error {
	cfg, err := config.Load(repo.StateDir(), e.getenv)
	if err != nil {
		return withHint(err, `"agmem config" shows every key and where its value comes from`)
	}
	if !cfg.Enabled {
		return notCaptured(e, o, "capture.enabled is false")
	}
	if dir := optedOut(); dir != "" {
		return notCaptured(e, o, "opted out by "+filepath.Join(dir, capture.OptOutFile))
	}
	policy, err := cfg.Policy()
	if err != nil {
		return withHint(err, `"agmem config" shows every key and where its value comes from`)
	}
	session := cmp.Or(o.session, e.getenv("AGMEM_SESSION"))
	// A bad session id is reported once the opt-outs are known: an opted-out project's
	// hook stays silent whatever it is given.
	var sessionErr error
	if session != "" {
		if err := memory.CheckSessionID(session); err != nil {
			sessionErr, session = withHint(err, "pass a session id without control characters"), ""
		}
	}
	now := time.Now()
	var decoded capture.Decoded
	var lines decodedLines
	switch {
	case o.tool != "":
		n, err := nativeFromFlags(o)
		if err != nil {
			return err
		}
		if decoded, err = capture.FromNative(n, policy, now); err != nil {
			return withHint(err, `run "agmem record --help"`)
		}
	case o.jsonl:
		var err error
		if lines, err = decodeLines(e.stdin, policy, cfg.MaxInput, now, session); err != nil {
			return err
		}
		decoded.Skipped = lines.skipped
	default:
		data, err := readStdin(e.stdin, cfg.MaxInput)
		if err != nil {
			return err
		}
		if decoded, err = capture.Decode(data, policy, now); err != nil {
			return withHint(err, "give a native object {\"tool_name\", \"arguments\", \"result\"} or a hook payload")
		}
	}
	for _, en := range decoded.Entries {
		p, optedOut, err := admit(en, session)
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
		fmt.Fprintln(e.stderr, "agmem: "+why)
	}
	if o.verbose {
		for _, why := range decoded.Skipped {
			fmt.Fprintln(e.stderr, "agmem: not captured: "+why)
		}
	}
	if lines.optedOut != "" {
		return notCaptured(e, o, "opted out by "+filepath.Join(lines.optedOut, capture.OptOutFile))
	}
	if sessionErr != nil {
		return sessionErr
	}

	if len(lines.entries) > 0 {
		appended, err := repo.Journal().AppendPrepared(lines.entries, cfg.SessionIdle, now)
		if err != nil {
			return fmt.Errorf("record: %w", err)
		}
		var out bytes.Buffer
		for i, a := range appended {
			switch {
			case a.Duplicate:
				if o.verbose {
					fmt.Fprintf(e.stderr, "agmem: already recorded: %s\n", a.ID)
				}
			case lines.entries[i].Observation():
				out.WriteString(a.ID)
				out.WriteByte('\n')
			}
		}
		e.stdout.Write(out.Bytes())
	}
	if len(bad) > 0 {
		return withHint(fmt.Errorf("%d line(s) were not recorded; the other lines were", len(bad)),
			"fix the lines named above and record them again; recording a line twice keeps it once")
	}
	return nil
}

// notCaptured ends a record that captures nothing by choice: exit 0, a reason with -v.
func notCaptured(e *env, o recordOptions, why string) error {
	if o.verbose {
		fmt.Fprintln(e.stderr, "agmem: not captured: "+why)
	}
	return nil
}

// admit readies a captured entry for the journal: in session if it names none, and
// encoded now rather than in the journal's transaction. optedOut is the directory of
// an opt-out file above the directory the entry happened in, if there is one.
func admit(en memory.Entry, session string) (p journal.Prepared, optedOut string, err error) {
	if dir := capture.OptedOut(entryCwd(en)); dir != "" {
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

// optedOut returns the directory of the working directory's opt-out file, or "".
func optedOut() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	return capture.OptedOut(wd)
}

// readStdin reads one object of at most limit bytes: a larger one is refused, not a
// reason to run out of memory in an agent's hook.
func readStdin(r io.Reader, limit int) ([]byte, error) {
	if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return nil, withHint(errors.New("no input: stdin is a terminal"),
				`pipe a JSON object into "agmem record", or use "agmem record --tool NAME"`)
		}
	}
	data, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("read stdin: %w", err)
	}
	if len(data) > limit {
		return nil, withHint(fmt.Errorf("input is larger than %s; nothing was recorded", sizeName(limit)),
			"capture.max_input_bytes raises the bound; a large value is cut to capture.max_value_bytes once read")
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, withHint(errors.New("no input on stdin"),
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
// was not captured and why, the bad lines, and an opt-out file that applies.
type decodedLines struct {
	entries  []journal.Prepared
	skipped  []string
	bad      []string
	optedOut string
}

// decodeLines reads --jsonl input: every good line is kept, every bad one reported by
// its line number. A line longer than limit is read past, not kept. Lines are decoded
// and admitted a chunk at a time on every core, and kept in their order; only their
// encoded entries stay.
func decodeLines(r io.Reader, p capture.Policy, limit int, now time.Time, session string) (decodedLines, error) {
	var all decodedLines
	br := bufio.NewReaderSize(r, 1<<20)
	var chunk []numberedLine
	decode := func() {
		results := make([]lineResult, len(chunk))
		var wg sync.WaitGroup
		workers := runtime.GOMAXPROCS(0)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < len(chunk); i += workers {
					results[i] = decodeLine(chunk[i].line, p, now, session)
				}
			}()
		}
		wg.Wait()
		for i, res := range results {
			if res.err != nil {
				all.bad = append(all.bad, fmt.Sprintf("line %d: %s", chunk[i].n, res.err))
				continue
			}
			all.entries = append(all.entries, res.entries...)
			all.skipped = append(all.skipped, res.skipped...)
			all.optedOut = cmp.Or(all.optedOut, res.optedOut)
		}
		chunk = chunk[:0]
	}
	for n := 1; ; n++ {
		line, long, err := readLine(br, limit)
		switch {
		case long:
			all.bad = append(all.bad, fmt.Sprintf("line %d: longer than %s", n, sizeName(limit)))
		case len(bytes.TrimSpace(line)) > 0:
			chunk = append(chunk, numberedLine{n, line})
		}
		if len(chunk) == decodeChunk || err != nil {
			decode()
		}
		if err == io.EOF {
			return all, nil
		}
		if err != nil {
			return all, fmt.Errorf("read stdin: %w", err)
		}
	}
}

// decodeChunk is how many lines are decoded at once.
const decodeChunk = 512

type numberedLine struct {
	n    int
	line []byte
}

type lineResult struct {
	entries  []journal.Prepared
	skipped  []string
	optedOut string
	err      error
}

// decodeLine decodes and admits one line: a line whose entries cannot all be admitted
// is a bad line, recorded not at all.
func decodeLine(line []byte, p capture.Policy, now time.Time, session string) lineResult {
	d, err := capture.Decode(line, p, now)
	if err != nil {
		return lineResult{err: err}
	}
	res := lineResult{skipped: d.Skipped}
	for _, en := range d.Entries {
		pr, optedOut, err := admit(en, session)
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

func nativeFromFlags(o recordOptions) (capture.Native, error) {
	args := map[string]json.RawMessage{}
	if o.argsJSON != "" {
		if err := json.Unmarshal([]byte(o.argsJSON), &args); err != nil {
			return capture.Native{}, withHint(fmt.Errorf("--args-json: %w", err), `give a JSON object, e.g. --args-json '{"path":"a.go"}'`)
		}
	}
	for _, kv := range o.args {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return capture.Native{}, withHint(fmt.Errorf("--arg %q is not KEY=VALUE", kv), `e.g. --arg path=README.md`)
		}
		args[k], _ = json.Marshal(v)
	}
	rawArgs, _ := json.Marshal(args)
	n := capture.Native{ToolName: &o.tool, Arguments: rawArgs, Source: capture.SourceFlags,
		MemoryType: o.memoryType, Error: o.errorText, SessionID: o.session}
	if o.memoryType != "" {
		if _, ok := memory.ParseType(o.memoryType); !ok {
			return n, withHint(fmt.Errorf("--memory-type %q is not a memory type", o.memoryType), "use episodic, semantic or procedural")
		}
	}
	result := o.result
	if o.resultFile != "" {
		if o.result != "" {
			return n, errors.New("--result and --result-file are exclusive")
		}
		data, err := os.ReadFile(o.resultFile)
		if err != nil {
			return n, fmt.Errorf("--result-file: %w", err)
		}
		result = string(data)
	}
	if o.errorText != "" && result == "" {
		result = o.errorText
	}
	if result != "" {
		n.Result, _ = json.Marshal(result)
	}
	return n, nil
}
