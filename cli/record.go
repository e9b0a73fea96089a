package cli

import (
	"bufio"
	"bytes"
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
	now := time.Now()
	var decoded capture.Decoded
	var bad []string
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
		if decoded, bad, err = decodeLines(e.stdin, policy, cfg.MaxInput, now); err != nil {
			return err
		}
	default:
		data, err := readStdin(e.stdin, cfg.MaxInput)
		if err != nil {
			return err
		}
		if decoded, err = capture.Decode(data, policy, now); err != nil {
			return withHint(err, "give a native object {\"tool_name\", \"arguments\", \"result\"} or a hook payload")
		}
	}
	for _, why := range bad {
		fmt.Fprintln(e.stderr, "agmem: "+why)
	}
	if o.verbose {
		for _, why := range decoded.Skipped {
			fmt.Fprintln(e.stderr, "agmem: not captured: "+why)
		}
	}

	for _, en := range decoded.Entries {
		if dir := capture.OptedOut(entryCwd(en)); dir != "" {
			return notCaptured(e, o, "opted out by "+filepath.Join(dir, capture.OptOutFile))
		}
	}

	session := o.session
	if session == "" {
		session = e.getenv("AGMEM_SESSION")
	}
	if session != "" {
		if err := memory.CheckSessionID(session); err != nil {
			return withHint(err, "pass a session id without control characters")
		}
		for _, en := range decoded.Entries {
			if en.Session() == "" {
				en.SetSession(session)
			}
		}
	}

	if len(decoded.Entries) > 0 {
		appended, err := repo.Journal().Append(decoded.Entries, cfg.SessionIdle, now)
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
			case decoded.Entries[i].Observation != nil:
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

// decodeLines reads --jsonl input: every good line is kept, every bad one reported by
// its line number. A line longer than limit is read past, not kept. Lines are decoded
// a chunk at a time on every core, and kept in their order.
func decodeLines(r io.Reader, p capture.Policy, limit int, now time.Time) (capture.Decoded, []string, error) {
	var all capture.Decoded
	var bad []string
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
					results[i].d, results[i].err = capture.Decode(chunk[i].line, p, now)
				}
			}()
		}
		wg.Wait()
		for i, res := range results {
			if res.err != nil {
				bad = append(bad, fmt.Sprintf("line %d: %s", chunk[i].n, res.err))
			}
			all.Entries = append(all.Entries, res.d.Entries...)
			all.Skipped = append(all.Skipped, res.d.Skipped...)
		}
		chunk = chunk[:0]
	}
	for n := 1; ; n++ {
		line, long, err := readLine(br, limit)
		switch {
		case long:
			bad = append(bad, fmt.Sprintf("line %d: longer than %s", n, sizeName(limit)))
		case len(bytes.TrimSpace(line)) > 0:
			chunk = append(chunk, numberedLine{n, line})
		}
		if len(chunk) == decodeChunk || err != nil {
			decode()
		}
		if err == io.EOF {
			return all, bad, nil
		}
		if err != nil {
			return all, bad, fmt.Errorf("read stdin: %w", err)
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
	d   capture.Decoded
	err error
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
