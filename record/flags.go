package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agmem/agmem/capture"
	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/memory"
)

// Flags are "agmem record"'s flags.
type Flags struct {
	JSONL      bool
	Verbose    bool
	Session    string
	Tool       string
	ToolUseID  string
	Cwd        string
	Args       []string
	ArgsJSON   string
	Result     string
	ResultFile string
	Error      string
	MemoryType string
	Agent      string
}

// Usage and Description say what record does, for either binary's help.
const (
	Usage       = "append observations to the journal (stdin: a hook payload or a native object)"
	Description = "Reads one JSON object on stdin (a hook payload of Claude Code, Codex, Gemini CLI or\n" +
		"Cursor, a native observation, or a session event), or one per line with --jsonl, or\n" +
		"builds one from --tool and its flags. Prints the id of each new observation. Calls not\n" +
		"worth capturing are skipped silently (see --verbose)."
)

// Flag is one of record's flags, for each binary's command line to define: exactly one
// of Bool, String and Strings (a flag given once per value) is set.
type Flag struct {
	Name, Alias, Usage string
	Bool               *bool
	String             *string
	Strings            *[]string
}

// Flags are record's flags, each writing into f.
func (f *Flags) Flags() []Flag {
	return []Flag{
		{Name: "jsonl", Usage: "read one object per line, all in one transaction", Bool: &f.JSONL},
		{Name: "verbose", Alias: "v", Usage: "say on stderr why input was not captured", Bool: &f.Verbose},
		{Name: "session", Usage: "session id for input that names none (default: $AGMEM_SESSION, else agmem's open session)", String: &f.Session},
		{Name: "tool", Usage: "record a call from flags: the tool's name", String: &f.Tool},
		{Name: "tool-use-id", Usage: "the call's id, which the agent gave it: recording it twice keeps it once", String: &f.ToolUseID},
		{Name: "cwd", Usage: "the directory the call happened in", String: &f.Cwd},
		{Name: "arg", Usage: "an argument KEY=VALUE of the call (repeatable)", Strings: &f.Args},
		{Name: "args-json", Usage: "the call's arguments as a JSON object", String: &f.ArgsJSON},
		{Name: "result", Usage: "the call's result text", String: &f.Result},
		{Name: "result-file", Usage: "read the call's result from this file", String: &f.ResultFile},
		{Name: "error", Usage: "the call failed with this error", String: &f.Error},
		{Name: "agent", Usage: "the agent whose hook this is (claude, codex, gemini, cursor): its payloads are read as that agent's", String: &f.Agent},
		{Name: "memory-type", Usage: "episodic, semantic or procedural (default: classified from the tool name)", String: &f.MemoryType},
	}
}

// observation is the call the flags describe; a result file is read up to limit bytes
// and one more, which tells that it is larger.
func (f Flags) observation(limit int) (Observation, error) {
	args := map[string]json.RawMessage{}
	if f.ArgsJSON != "" {
		if err := json.Unmarshal([]byte(f.ArgsJSON), &args); err != nil {
			return Observation{}, hint.With(fmt.Errorf("--args-json: %w", err), `give a JSON object, e.g. --args-json '{"path":"a.go"}'`)
		}
	}
	for _, kv := range f.Args {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return Observation{}, hint.With(fmt.Errorf("--arg %q is not KEY=VALUE", kv), `e.g. --arg path=README.md`)
		}
		args[k], _ = json.Marshal(v)
	}
	rawArgs, _ := json.Marshal(args)
	o := Observation{Tool: f.Tool, ToolUseID: f.ToolUseID, Cwd: f.Cwd, Arguments: json.RawMessage(rawArgs),
		Source: capture.SourceFlags, MemoryType: f.MemoryType, Error: f.Error}
	if f.MemoryType != "" {
		if _, ok := memory.ParseType(f.MemoryType); !ok {
			return o, hint.With(fmt.Errorf("--memory-type %q is not a memory type", f.MemoryType), "use episodic, semantic or procedural")
		}
	}
	result := f.Result
	if f.ResultFile != "" {
		if f.Result != "" {
			return o, errors.New("--result and --result-file are exclusive")
		}
		fh, err := os.Open(f.ResultFile)
		if err != nil {
			return o, fmt.Errorf("--result-file: %w", err)
		}
		data, err := io.ReadAll(io.LimitReader(fh, int64(limit)+1))
		fh.Close()
		if err != nil {
			return o, fmt.Errorf("--result-file: %w", err)
		}
		result = string(data)
	}
	if f.Error != "" && result == "" {
		result = f.Error
	}
	if result != "" {
		o.Result = result
	}
	return o, nil
}
