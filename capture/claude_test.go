package capture

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agmem/agmem/memory"
)

// claudeSample is the recorded Claude Code session that `agmem demo` replays.
const claudeSample = "../cli/demo/claude-code-session.jsonl"

const sampleSession = "0b7e4d2c-8a31-4f6e-b5c9-1d2e3f4a5b6c"

// now is the time hook payloads (which carry none) are recorded at. It is not UTC on
// purpose: what capture returns must be.
var now = time.Date(2025, 3, 4, 5, 6, 7, 890_000_000, time.FixedZone("CET", 3600))

func sampleLines(t testing.TB) [][]byte {
	t.Helper()
	data, err := os.ReadFile(claudeSample)
	if err != nil {
		t.Fatal(err)
	}
	var lines [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
			lines = append(lines, bytes.Clone(line))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// topMember returns one top-level member of a JSON object, compacted; nil when absent.
func topMember(t *testing.T, line []byte, name string) json.RawMessage {
	t.Helper()
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		t.Fatal(err)
	}
	raw, ok := obj[name]
	if !ok {
		return nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func decodeOne(t *testing.T, line []byte) memory.Entry {
	t.Helper()
	d, err := Decode(line, defaultPolicy(), now)
	if err != nil {
		t.Fatalf("Decode(%s): %v", line, err)
	}
	if len(d.Entries) != 1 || len(d.Skipped) != 0 {
		t.Fatalf("Decode(%s) = %d entries, skipped %q; want one entry", line, len(d.Entries), d.Skipped)
	}
	checkComplete(t, d.Entries[0])
	return d.Entries[0]
}

// checkComplete checks what capture promises of every entry it returns.
func checkComplete(t *testing.T, e memory.Entry) {
	t.Helper()
	if (e.Observation == nil) == (e.Event == nil) {
		t.Fatalf("entry holds observation %v and event %v; want exactly one", e.Observation, e.Event)
	}
	if id, err := memory.NormalizeID(e.ID()); err != nil || id != e.ID() {
		t.Errorf("entry id %q is not canonical (%q, %v)", e.ID(), id, err)
	}
	if e.Time().IsZero() || e.Time().Location() != time.UTC {
		t.Errorf("entry time %s is zero or not UTC", e.Time())
	}
	if o := e.Observation; o != nil {
		if !json.Valid(o.Arguments) || !bytes.HasPrefix(o.Arguments, []byte("{")) {
			t.Errorf("arguments %s are not a JSON object", o.Arguments)
		}
		if len(o.Result) > 0 && !json.Valid(o.Result) {
			t.Errorf("result %s is not JSON", o.Result)
		}
		if _, ok := memory.ParseType(string(o.MemoryType)); !ok {
			t.Errorf("memory type %q is not one of the three", o.MemoryType)
		}
		if o.Summary == "" {
			t.Errorf("summary is empty")
		}
	}
}

func TestDecodeClaudeSampleObservations(t *testing.T) {
	lines := sampleLines(t)
	if len(lines) != 10 {
		t.Fatalf("%s has %d lines; this test knows 10", claudeSample, len(lines))
	}
	ms := func(n int64) *int64 { return &n }
	lintError := "Exit code 1\nsrc/rss.ts:2:1  error  Line too long (max-len)"
	tests := []struct {
		line      int
		hook      string
		tool      string
		typ       memory.Type
		summary   string
		toolUseID string
		duration  *int64
		err       string
		result    string // when set, the exact compact result; else tool_response compacted
	}{
		{line: 2, hook: "PostToolUse", tool: "Glob", typ: memory.Semantic,
			summary: "Glob pattern=src/**/*.ts", toolUseID: "toolu_01SAMPLE000000000000001",
			result: `{"filenames":["/home/ana/blog/src/build.ts","/home/ana/blog/src/posts.ts"],"durationMs":8,"numFiles":2,"truncated":false}`},
		{line: 3, hook: "PostToolUse", tool: "Read", typ: memory.Semantic,
			summary: "Read file_path=/home/ana/blog/src/build.ts", toolUseID: "toolu_01SAMPLE000000000000002",
			duration: ms(2)},
		{line: 4, hook: "PostToolUse", tool: "Write", typ: memory.Episodic,
			summary: "Write file_path=/home/ana/blog/src/rss.ts", toolUseID: "toolu_01SAMPLE000000000000003",
			duration: ms(3), result: `{"type":"create","filePath":"/home/ana/blog/src/rss.ts"}`},
		{line: 5, hook: "PostToolUse", tool: "Bash", typ: memory.Episodic,
			summary: "Bash command=npm run build", toolUseID: "toolu_01SAMPLE000000000000004",
			duration: ms(3120)},
		{line: 6, hook: "PostToolUseFailure", tool: "Bash", typ: memory.Episodic,
			summary: "Bash command=npm run lint", toolUseID: "toolu_01SAMPLE000000000000005",
			duration: ms(950), err: lintError,
			result: `"Exit code 1\nsrc/rss.ts:2:1  error  Line too long (max-len)"`},
		{line: 7, hook: "PostToolUse", tool: "mcp__fetch__fetch", typ: memory.Semantic,
			summary: "mcp__fetch__fetch url=https://www.rssboard.org/rss-specification", toolUseID: "toolu_01SAMPLE000000000000006",
			result: `[{"type":"text","text":"RSS 2.0 Specification. RSS is a Web content syndication format. Its name is an acronym for Really Simple Syndication. A channel has three required elements: title, link, description."}]`},
	}
	for _, tt := range tests {
		t.Run(tt.tool+"/"+tt.hook, func(t *testing.T) {
			line := lines[tt.line]
			if hook := string(topMember(t, line, "hook_event_name")); hook != `"`+tt.hook+`"` {
				t.Fatalf("sample line %d is %s, this row expects %s", tt.line+1, hook, tt.hook)
			}
			o := decodeOne(t, line).Observation
			if o == nil {
				t.Fatalf("line %d decoded to an event, want an observation", tt.line+1)
			}
			wantResult := tt.result
			if wantResult == "" {
				wantResult = string(topMember(t, line, "tool_response"))
			}
			checks := []struct {
				what      string
				got, want any
			}{
				{"tool_name", o.ToolName, tt.tool},
				{"session_id", o.SessionID, sampleSession},
				{"source", o.Source, SourceClaudeCode},
				{"tool_use_id", o.ToolUseID, tt.toolUseID},
				{"cwd", o.Cwd, "/home/ana/blog"},
				{"agent_id", o.AgentID, ""},
				{"memory_type", o.MemoryType, tt.typ},
				{"summary", o.Summary, tt.summary},
				{"error", o.Error, tt.err},
				{"arguments", string(o.Arguments), string(topMember(t, line, "tool_input"))},
				{"result", string(o.Result), wantResult},
				{"duration_ms", o.DurationMS, tt.duration},
			}
			for _, c := range checks {
				if !reflect.DeepEqual(c.got, c.want) {
					t.Errorf("%s = %#v, want %#v", c.what, c.got, c.want)
				}
			}
			if !o.Timestamp.Equal(now) || o.Timestamp.Location() != time.UTC {
				t.Errorf("timestamp = %s, want %s in UTC", o.Timestamp, now.UTC())
			}
			if tt.err != "" && o.ResultText() != tt.err {
				t.Errorf("ResultText() of a failure = %q, want the error %q", o.ResultText(), tt.err)
			}
		})
	}
}

func TestDecodeClaudeSampleEvents(t *testing.T) {
	lines := sampleLines(t)
	common := map[string]string{
		"cwd":             "/home/ana/blog",
		"transcript_path": "/home/ana/.claude/projects/-home-ana-blog/" + sampleSession + ".jsonl",
		"permission_mode": "acceptEdits",
	}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range common {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		line  int
		name  string
		text  string
		attrs map[string]string
	}{
		{0, "SessionStart", "", with(map[string]string{"start_source": "startup", "model": "claude-opus-4-1"})},
		{1, "UserPromptSubmit", "Add an RSS feed to the blog and make sure the build still passes.", with(nil)},
		{8, "Stop", "Added src/rss.ts and wired it into the build; lint flags one long line.", with(nil)},
		{9, "SessionEnd", "other", with(nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := decodeOne(t, lines[tt.line]).Event
			if ev == nil {
				t.Fatalf("line %d decoded to an observation, want the event %s", tt.line+1, tt.name)
			}
			if ev.Name != tt.name || ev.Text != tt.text || ev.SessionID != sampleSession || ev.Source != SourceClaudeCode {
				t.Errorf("event = {name %q, text %q, session %q, source %q}; want {%q, %q, %q, %q}",
					ev.Name, ev.Text, ev.SessionID, ev.Source, tt.name, tt.text, sampleSession, SourceClaudeCode)
			}
			if !reflect.DeepEqual(ev.Attrs, tt.attrs) {
				t.Errorf("attrs = %v, want %v", ev.Attrs, tt.attrs)
			}
			if !ev.Timestamp.Equal(now) || ev.Timestamp.Location() != time.UTC {
				t.Errorf("timestamp = %s, want %s in UTC", ev.Timestamp, now.UTC())
			}
		})
	}
}

func TestDecodeClaudeSampleWholeSession(t *testing.T) {
	ids := map[string]bool{}
	var kinds []string
	for i, line := range sampleLines(t) {
		e := decodeOne(t, line)
		if ids[e.ID()] {
			t.Errorf("line %d: id %s given twice", i+1, e.ID())
		}
		ids[e.ID()] = true
		if e.Observation != nil {
			kinds = append(kinds, e.Observation.ToolName)
		} else {
			kinds = append(kinds, e.Event.Name)
		}
	}
	want := []string{"SessionStart", "UserPromptSubmit", "Glob", "Read", "Write", "Bash", "Bash",
		"mcp__fetch__fetch", "Stop", "SessionEnd"}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("the sample decodes to %q, want %q", kinds, want)
	}
}

func TestDecodeClaudeSubagentStop(t *testing.T) {
	line := `{"session_id":"s1","hook_event_name":"SubagentStop","agent_id":"a-7","agent_type":"Explore","last_assistant_message":"found it"}`
	ev := decodeOne(t, []byte(line)).Event
	if ev == nil || ev.Name != "SubagentStop" || ev.Text != "found it" {
		t.Fatalf("SubagentStop decoded to %+v", ev)
	}
	want := map[string]string{"agent_id": "a-7", "agent_type": "Explore"}
	if !reflect.DeepEqual(ev.Attrs, want) {
		t.Errorf("attrs = %v, want %v", ev.Attrs, want)
	}
}

func TestDecodeClaudeEventWithoutAttrs(t *testing.T) {
	ev := decodeOne(t, []byte(`{"hook_event_name":"Stop"}`)).Event
	if ev == nil || ev.SessionID != "" || ev.Attrs != nil {
		t.Errorf("bare Stop decoded to %+v; want an event with no session (the journal assigns it) and no attrs", ev)
	}
}

func TestDecodeClaudeFailureKeptHoweverShort(t *testing.T) {
	line := `{"session_id":"s1","hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"false"},"tool_use_id":"t1","error":"exit 1"}`
	o := decodeOne(t, []byte(line)).Observation
	if o == nil || o.Error != "exit 1" || string(o.Result) != `"exit 1"` {
		t.Errorf("short failure decoded to %+v; want it kept with error and result %q", o, "exit 1")
	}
}

func TestDecodeClaudeAgentID(t *testing.T) {
	line := `{"session_id":"s1","hook_event_name":"PostToolUse","agent_id":"sub-1","tool_name":"Grep","tool_input":{"pattern":"TODO"},"tool_response":"` + strings.Repeat("x", 60) + `"}`
	o := decodeOne(t, []byte(line)).Observation
	if o.AgentID != "sub-1" || o.MemoryType != memory.Semantic {
		t.Errorf("agent_id = %q, memory_type = %q; want sub-1, semantic", o.AgentID, o.MemoryType)
	}
}

// TestDecodeClaudePostToolBatch checks that a batch gives the calls the agent refused
// before running them, each a failed call with the agent's reason, and leaves the calls
// that ran to their own PostToolUse: the payload Claude Code 2.1.332 sent.
func TestDecodeClaudePostToolBatch(t *testing.T) {
	long := strings.Repeat("line of output ", 10)
	payload := `{"session_id":"s-batch","cwd":"/repo","prompt_id":"p1","hook_event_name":"PostToolBatch","tool_calls":[
		{"tool_name":"Read","tool_input":{"file_path":"a.go"},"tool_use_id":"toolu_A","tool_response":"` + long + `"},
		{"tool_name":"Write","tool_input":{"file_path":"/repo/b.go","content":"x"},"tool_use_id":"toolu_B","tool_response":"<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>"},
		{"tool_name":"Bash","tool_input":{"command":"go test"},"tool_use_id":"toolu_C","tool_response":{"stdout":"` + long + `"}}
	]}`
	d, err := Decode([]byte(payload), defaultPolicy(), now)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Entries) != 1 {
		t.Fatalf("PostToolBatch gave %d entries, want the refused Write alone", len(d.Entries))
	}
	checkComplete(t, d.Entries[0])
	o := d.Entries[0].Observation
	if o.ToolName != "Write" || o.ToolUseID != "toolu_B" || o.SessionID != "s-batch" || o.Cwd != "/repo" || o.Source != SourceClaudeCode {
		t.Errorf("got %s %s in %q at %q from %q; want the refused Write of the payload", o.ToolName, o.ToolUseID, o.SessionID, o.Cwd, o.Source)
	}
	if want := "File has not been read yet. Read it first before writing to it."; o.Error != want {
		t.Errorf("error %q, want %q", o.Error, want)
	}
}

func TestDecodeClaudePostToolBatchBadCall(t *testing.T) {
	payload := `{"session_id":"s","hook_event_name":"PostToolBatch","tool_calls":[{"tool_name":"Read"},{"tool_input":{},"tool_response":"<tool_use_error>refused</tool_use_error>"}]}`
	d, err := Decode([]byte(payload), defaultPolicy(), now)
	if err == nil || !strings.Contains(err.Error(), "tool call 2") {
		t.Errorf("Decode = %+v, %v; want an error naming tool call 2", d, err)
	}
	if len(d.Entries) != 0 {
		t.Errorf("a refused batch still gave %d entries", len(d.Entries))
	}
}

func TestDecodeClaudeEmptyBatch(t *testing.T) {
	d, err := Decode([]byte(`{"session_id":"s","hook_event_name":"PostToolBatch","tool_calls":[]}`), defaultPolicy(), now)
	if err != nil || len(d.Entries) != 0 {
		t.Errorf("empty PostToolBatch = %+v, %v; want nothing and no error", d, err)
	}
}

func TestDecodeClaudeUnknownEventSkipped(t *testing.T) {
	for _, hook := range []string{"PreToolUse", "Notification", "PreCompact", ""} {
		payload := `{"session_id":"s","hook_event_name":"` + hook + `","tool_name":"Bash","tool_input":{"command":"ls"}}`
		d, err := Decode([]byte(payload), defaultPolicy(), now)
		if err != nil {
			t.Errorf("%q: Decode error %v, want it skipped", hook, err)
			continue
		}
		if len(d.Entries) != 0 {
			t.Errorf("%q: %d entries, want none", hook, len(d.Entries))
		}
		if len(d.Skipped) != 1 || !strings.Contains(d.Skipped[0], `"`+hook+`"`) {
			t.Errorf("%q: Skipped = %q, want a reason naming the event", hook, d.Skipped)
		}
	}
}

func TestDecodeClaudeIgnoredAndShort(t *testing.T) {
	tests := []struct {
		name, payload string
	}{
		{"ignored tool", `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"echo","tool_input":{},"tool_response":"` + strings.Repeat("x", 80) + `"}`},
		{"short string result", `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"true"},"tool_response":"ok"}`},
		{"short object result", `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{},"tool_response":{"stdout":"ok","stderr":""}}`},
	}
	for _, tt := range tests {
		d, err := Decode([]byte(tt.payload), defaultPolicy(), now)
		if err != nil || len(d.Entries) != 0 || len(d.Skipped) != 1 {
			t.Errorf("%s: Decode = %d entries, skipped %q, %v; want skipped with a reason", tt.name, len(d.Entries), d.Skipped, err)
		}
	}
}
