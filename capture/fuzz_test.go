package capture

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agmem/agmem/internal/jsonscan"
	"github.com/agmem/agmem/memory"
)

// FuzzDecode checks that no input makes Decode panic, and that whatever it returns is
// ready for the journal: valid once it has a session, with a canonical id and a UTC time.
func FuzzDecode(f *testing.F) {
	for _, line := range sampleLines(f) {
		f.Add(line)
	}
	for _, s := range nativeSample {
		f.Add([]byte(s.line))
	}
	for _, s := range []string{
		`{"id":"5f0c3a52-1b2d-4e8f-9a6b-7c8d9e0f1a2b","timestamp":"2025-01-02T03:04:05.123456","tool_name":"read_file","arguments":{"path":"a"},"result":"` + longResult + `","memory_type":"semantic","summary":null}`,
		`{"id":"01jgkx2a3b4c5d6e7f8g9h0jkm","session_id":"s","timestamp":"2025-01-02T03:04:05Z","event":"UserPromptSubmit","text":"hi"}`,
		`{"hook_event_name":"PostToolBatch","session_id":"s","tool_calls":[{"tool_name":"Read","tool_input":{"file_path":"a"},"tool_use_id":"t1"},{"tool_name":"echo"}]}`,
		`{"hook_event_name":"PostToolUseFailure","tool_name":"Bash","error":"x","duration_ms":1e30}`,
		`{"tool_name":"x","arguments":[1,2],"result":{"a":null},"duration_ms":-5}`,
		`{"tool_name":"x","timestamp":"9999-12-31T23:59:59-23:59"}`,
		`{"event":null}`,
		`[]`,
		``,
	} {
		f.Add([]byte(s))
	}
	policy := defaultPolicy()
	policy.MaxValue = 1 << 10 // small, so that the fuzzer reaches the cuts
	now := time.Date(2025, 3, 4, 5, 6, 7, 0, time.FixedZone("X", -7200))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Decode(data, policy, now)
		if err != nil {
			if len(d.Entries) != 0 {
				t.Fatalf("Decode returned %d entries with its error %v", len(d.Entries), err)
			}
			return
		}
		for i, e := range d.Entries {
			if (e.Observation == nil) == (e.Event == nil) {
				t.Fatalf("entry %d holds neither or both of observation and event", i)
			}
			if e.Session() == "" {
				e.SetSession("s")
			}
			if err := e.Validate(); err != nil {
				t.Fatalf("entry %d of %q does not validate: %v", i, data, err)
			}
			id := e.ID()
			if id == "" {
				t.Fatalf("entry %d of %q has no id", i, data)
			}
			if norm, err := memory.NormalizeID(id); err != nil || norm != id {
				t.Fatalf("entry %d of %q has id %q, not canonical (%q, %v)", i, data, id, norm, err)
			}
			if ts := e.Time(); ts.IsZero() || ts.Location() != time.UTC {
				t.Fatalf("entry %d of %q has time %s, not a UTC time", i, data, ts)
			}
			if o := e.Observation; o != nil {
				for name, raw := range map[string][]byte{"arguments": o.Arguments, "result": o.Result} {
					if len(raw) > 0 && !json.Valid(raw) {
						t.Fatalf("entry %d of %q: %s is not JSON: %q", i, data, name, raw)
					}
					if !utf8.Valid(raw) {
						t.Fatalf("entry %d of %q: %s is not UTF-8", i, data, name)
					}
					if n := longestString(t, raw); n > policy.MaxValue+len("\n[TRUNCATED: 9999999999 bytes]") {
						t.Fatalf("entry %d of %q: a string of %s is %d bytes, past the bound of %d", i, data, name, n, policy.MaxValue)
					}
				}
			}
		}
	})
}

// longestString is the length in bytes of the longest string in a JSON value.
func longestString(t *testing.T, raw []byte) int {
	if len(raw) == 0 {
		return 0
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	var walk func(any) int
	walk = func(v any) int {
		n := 0
		switch x := v.(type) {
		case string:
			n = len(x)
		case []any:
			for _, e := range x {
				n = max(n, walk(e))
			}
		case map[string]any:
			for k, e := range x {
				n = max(n, len(k), walk(e))
			}
		}
		return n
	}
	return walk(v)
}

// readableByBoth says whether agmem's reading of an object's members is the one
// encoding/json makes, which the fuzzers below hold it to: each member name is ASCII
// (encoding/json also folds some other letters into ASCII ones: "ſ" into "s") and
// appears once whatever its case (encoding/json reads every one, refusing the object
// if any has the wrong type; agmem reads the last).
func readableByBoth(data []byte) bool {
	seen := map[string]bool{}
	ok := jsonscan.Members(data, func(r *jsonscan.Scanner, name string) bool {
		lower := strings.ToLower(name)
		for i := 0; i < len(name); i++ {
			if name[i] >= utf8.RuneSelf {
				return false
			}
		}
		if seen[lower] {
			return false
		}
		seen[lower] = true
		_, err := r.Skip(1)
		return err == nil
	})
	return ok
}

// FuzzNativeAsEncodingJSON holds the one decoder of native observations to
// encoding/json: an object it reads as a native observation, json.Unmarshal reads as
// the same Native, and one it refuses for a member's type, json.Unmarshal refuses too;
// and the file FilePath finds in its arguments is the one json.Unmarshal into a map finds.
func FuzzNativeAsEncodingJSON(f *testing.F) {
	for _, s := range nativeSample {
		f.Add([]byte(s.line))
	}
	for _, s := range []string{
		`{"Tool_Name":"Read","ARGUMENTS":{"path":"a","path":null,"file":"b"},"result":"x\u00e9\ud83d\ude00\ud800\"\\\/\b\f\n\r\t"}`,
		`{"tool\u005fname":"x","id":"a","duration_ms":-1.5e3,"result":[1,{"a":[]},true,false,null]}`,
		`{"tool_name":"x","duration_ms":1e400}`,
		`{"tool_name":"x","arguments":{"file_path":5,"filePath":"\u0000x"},"result":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`,
		"{\"tool_name\":\"x\xff\",\"\xc3\x28\":1,\"result\":\"a\xe2\x80\"} ",
		`{"tool_name":"x","session_id":5}`,
		`{"tool_name":"x","duration_ms":"5"}`,
		`{"tool_name":null,"summary":null}`,
		`{"tool_name":"x","hook_event_name":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := FilePath(data), pathOfJSON(data); got != want {
			t.Fatalf("FilePath(%q) = %q, want %q", data, got, want)
		}
		if !readableByBoth(data) {
			return
		}
		o, err := readObject(data)
		if err != nil {
			t.Fatalf("readObject(%q): %v, though it is an object", data, err)
		}
		if !o.has(mToolName) || o.set(mHookEvent) {
			return
		}
		n, err := nativeOf(o)
		var want Native
		wantErr := json.Unmarshal(data, &want)
		switch {
		case (err == nil) != (wantErr == nil):
			t.Fatalf("%q: agmem reads it with %v, json.Unmarshal with %v", data, err, wantErr)
		case err == nil && !reflect.DeepEqual(n, want):
			t.Fatalf("nativeOf(%q)\n = %+v\nwant %+v", data, n, want)
		case err == nil:
			if got, want := FilePath(n.Arguments), pathOfJSON(n.Arguments); got != want {
				t.Fatalf("FilePath(%q) = %q, want %q", n.Arguments, got, want)
			}
		}
	})
}

// claudeHookJSON is what encoding/json reads of a Claude Code hook payload, the oracle
// of FuzzClaudeHookAsEncodingJSON.
type claudeHookJSON struct {
	SessionID      string `json:"session_id"`
	Cwd            string `json:"cwd"`
	AgentID        string `json:"agent_id"`
	AgentType      string `json:"agent_type"`
	Source         string `json:"source"`
	Model          string `json:"model"`
	Reason         string `json:"reason"`
	Prompt         string `json:"prompt"`
	LastMessage    string `json:"last_assistant_message"`
	TranscriptPath string `json:"transcript_path"`
	PermissionMode string `json:"permission_mode"`
	TurnID         string `json:"turn_id"`
	claudeCallJSON
	ToolCalls []claudeCallJSON `json:"tool_calls"`
}

// claudeCallJSON is what encoding/json reads of one call of a PostToolBatch.
type claudeCallJSON struct {
	ToolName     string          `json:"tool_name"`
	ToolUseID    string          `json:"tool_use_id"`
	Error        *string         `json:"error"`
	DurationMS   *float64        `json:"duration_ms"`
	ToolInput    json.RawMessage `json:"tool_input"`
	ToolResponse json.RawMessage `json:"tool_response"`
}

// FuzzClaudeHookAsEncodingJSON holds the one decoder of Claude Code and Codex hook
// payloads to encoding/json: a payload it reads, json.Unmarshal reads with the same
// fields, and one it refuses for a member's type, json.Unmarshal refuses too.
func FuzzClaudeHookAsEncodingJSON(f *testing.F) {
	for _, line := range sampleLines(f) {
		f.Add(line)
	}
	for _, s := range []string{
		`{"Hook_Event_Name":"PostToolUse","TOOL_NAME":"Read","tool_input":{"file_path":"a"},"tool_use_id":"t","error":"x"}`,
		`{"hook_event_name":"PostToolUseFailure","tool_name":"Bash","error":"boom","duration_ms":-1.5e3,"turn_id":null}`,
		`{"hook\u005fevent_name":"Stop","session_id":"s","turn_id":"t1","last_assistant_message":"bye\ud800"}`,
		`{"hook_event_name":"PostToolBatch","session_id":"s","tool_calls":[{"tool_name":"Read","tool_input":{"file_path":"a"},"tool_use_id":"t1"},{"tool_name":5}]}`,
		`{"hook_event_name":"PostToolBatch","tool_calls":{"tool_name":"Read"}}`,
		`{"hook_event_name":"PostToolUse","tool_name":5}`,
		`{"hook_event_name":"PostToolUse","tool_name":"x","error":false}`,
		`{"hook_event_name":"PostToolUse","tool_name":"x","duration_ms":1e400}`,
		`{"hook_event_name":"PostToolUse","tool_name":"x"} x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !readableByBoth(data) {
			return
		}
		o, err := readObject(data)
		if err != nil || !o.set(mHookEvent) {
			return
		}
		h := claudeHook{}
		err = h.read(o)
		if err == nil {
			var calls []*object
			if calls, err = o.objects(mToolCalls); err == nil {
				for _, c := range calls {
					if !readableByBoth(c.whole) {
						return
					}
					var call claudeCall
					if err = call.read(c); err != nil {
						break
					}
					h.ToolCalls = append(h.ToolCalls, call)
				}
			}
		}
		var want claudeHookJSON
		wantErr := json.Unmarshal(data, &want)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("%q: agmem reads it with %v, json.Unmarshal with %v", data, err, wantErr)
		}
		if err != nil {
			return
		}
		if len(want.ToolCalls) == 0 {
			want.ToolCalls = nil // an empty list is no calls
		}
		got := claudeHookJSON{SessionID: h.SessionID, Cwd: h.Cwd, AgentID: h.AgentID, AgentType: h.AgentType,
			Source: h.Source, Model: h.Model, Reason: h.Reason, Prompt: h.Prompt, LastMessage: h.LastMessage,
			TranscriptPath: h.TranscriptPath, PermissionMode: h.PermissionMode, TurnID: h.TurnID,
			claudeCallJSON: claudeCallJSON{h.ToolName, h.ToolUseID, h.Error, h.DurationMS, h.ToolInput, h.ToolResponse}}
		for _, c := range h.ToolCalls {
			got.ToolCalls = append(got.ToolCalls, claudeCallJSON{c.ToolName, c.ToolUseID, c.Error, c.DurationMS, c.ToolInput, c.ToolResponse})
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\nagmem reads %+v\n json reads %+v", data, got, want)
		}
	})
}

// FuzzWithhold checks that capture fails closed on any JSON a call's arguments may be:
// FilePath finds the file encoding/json finds, even past members it skips, the
// sanitiser's walk reads it, and a call in each shape an agent sends is withheld by the
// glob that file matches.
func FuzzWithhold(f *testing.F) {
	for _, s := range nativeSample {
		if o, err := readObject([]byte(s.line)); err == nil && o.value(mArguments) != nil {
			f.Add([]byte(o.value(mArguments)))
		}
	}
	for _, s := range []string{
		`{"file_path":".env"}`, `{"fil\u0065_path":"id_rsa","path":"a"}`, `{"path":"a","path":"","file":".netrc"}`,
		`{"filePath":5,"path":"x.pem","x":[{"a":"\ud800"},1e9,-0.5,true,false,null]}`, `{"path":"\u002eenv"}`,
		"{\"path\":\".env\xff\",\"\xc3\x28\":1}", `"{\"path\":\".env\"}"`, `[".env"]`, `null`, ` 5 `, `{}`,
		`{"notebook_path":"a/.ssh/config","x":` + strings.Repeat(`{"a":`, 100) + `[]` + strings.Repeat(`}`, 100) + `}`,
	} {
		f.Add([]byte(s))
	}
	p := defaultPolicy()
	now := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	const result = `"a result long enough to be worth keeping, whatever the arguments are"`
	shapes := []struct {
		format   string
		unquoted bool // the agent's string holding JSON is read as that JSON
	}{
		{`{"tool_name":"Read","session_id":"s","arguments":%s,"result":` + result + `}`, false},
		{`{"hook_event_name":"PostToolUse","session_id":"s","tool_name":"Read","tool_input":%s,"tool_response":` + result + `}`, false},
		{`{"hook_event_name":"PostToolUse","turn_id":"t","session_id":"s","tool_name":"Read","tool_input":%s,"tool_response":` + result + `}`, false},
		{`{"hook_event_name":"PostToolBatch","session_id":"s","tool_calls":[{"tool_name":"Read","tool_input":%s,"tool_response":"<tool_use_error>refused</tool_use_error>"}]}`, false},
		{`{"hook_event_name":"AfterTool","session_id":"s","timestamp":"2025-01-02T03:04:05Z","tool_name":"read_file","tool_input":%s,"tool_response":{"llmContent":` + result + `}}`, false},
		{`{"hook_event_name":"postToolUse","conversation_id":"s","tool_name":"Read","tool_input":%s,"tool_output":` + result + `}`, true},
		{`{"hook_event_name":"afterMCPExecution","conversation_id":"s","tool_name":"Read","tool_input":%s,"result_json":` + result + `}`, true},
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		if !json.Valid(args) {
			return
		}
		if got, want := FilePath(args), pathOfJSON(args); got != want {
			t.Fatalf("FilePath(%s) = %q, encoding/json finds %q", args, got, want)
		}
		if inner := fmt.Sprintf(`{"x":%s,"file_path":".env"}`, args); json.Valid([]byte(inner)) && FilePath([]byte(inner)) != ".env" {
			t.Fatalf("FilePath(%s) misses the file after the member it skips", inner)
		}
		s := sanitizer{p: &p}
		for _, whole := range []int{0, 1} {
			if out, err := s.json(args, "arguments", "", whole); err != nil || !json.Valid(out) {
				t.Fatalf("the walk of %s gives %q, %v", args, out, err)
			}
		}
		quoted, _ := json.Marshal(string(args)) // as Cursor sends some arguments
		for _, sh := range shapes {
			for _, input := range [][]byte{args, quoted} {
				payload := fmt.Sprintf(sh.format, input)
				if !json.Valid([]byte(payload)) {
					continue // nested too deep once inside the payload
				}
				d, err := Decode([]byte(payload), p, now)
				if err != nil || len(d.Entries) != 1 {
					t.Fatalf("Decode(%s) = %d entries, %v", payload, len(d.Entries), err)
				}
				if sh.unquoted {
					input = unquoteJSON(input)
				}
				want := p.withheldBy(pathOfJSON(objectOf(input)))
				if got := d.Entries[0].Observation.Withheld; got != want {
					t.Fatalf("Decode(%s) withheld by %q, want %q", payload, got, want)
				}
			}
		}
	})
}

// pathOfJSON is pathOf by way of encoding/json.
func pathOfJSON(args []byte) string {
	var members map[string]json.RawMessage
	if json.Unmarshal(args, &members) != nil {
		return ""
	}
	for _, k := range pathKeys {
		var s string
		if json.Unmarshal(members[k], &s) == nil && s != "" {
			return s
		}
	}
	return ""
}
