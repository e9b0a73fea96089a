package capture

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agmem/agmem/memory"
)

// longResult is over the 50-character threshold under which a result is not captured.
const longResult = "The store keeps one file per tenant; writes go through a single goroutine."

// nativeSample is /work/shared/samples/native.jsonl: native objects as a user or another
// tool would write them.
var nativeSample = []struct {
	line string
	tool string
	typ  memory.Type // "" when the line is not captured
}{
	{`{"tool_name": "run_command", "arguments": {"command": "make test"}, "result": "ok  \texample.com/app\t0.412s\nok  \texample.com/app/store\t1.020s\n", "session_id": "native-demo"}`,
		"run_command", memory.Episodic},
	{`{"tool_name": "read_file", "arguments": {"path": "docs/architecture.md"}, "result": "The store keeps one file per tenant; writes go through a single goroutine that batches fsyncs.", "session_id": "native-demo"}`,
		"read_file", memory.Semantic},
	{`{"tool_name": "search", "arguments": {"query": "bbolt compact in place"}, "result": "bbolt cannot shrink a file in place; Compact copies live pages into a new file, which then replaces the old one.", "session_id": "native-demo"}`,
		"search", memory.Semantic},
	{`{"tool_name": "setup_ci", "arguments": {"provider": "generic"}, "result": "Wrote .ci/run: go vet ./... && go test -race ./... ; runs on every push to main.", "session_id": "native-demo"}`,
		"setup_ci", memory.Procedural},
	{`{"tool_name": "echo", "arguments": {"text": "hi"}, "result": "hi", "session_id": "native-demo"}`,
		"echo", ""},
}

func TestDecodeNativeSample(t *testing.T) {
	for _, tt := range nativeSample {
		t.Run(tt.tool, func(t *testing.T) {
			d, err := Decode([]byte(tt.line), defaultPolicy(), now)
			if err != nil {
				t.Fatal(err)
			}
			if tt.typ == "" {
				if len(d.Entries) != 0 || len(d.Skipped) == 0 {
					t.Fatalf("Decode = %d entries, skipped %q; want it skipped with a reason", len(d.Entries), d.Skipped)
				}
				return
			}
			if len(d.Entries) != 1 {
				t.Fatalf("Decode = %d entries, skipped %q; want one", len(d.Entries), d.Skipped)
			}
			checkComplete(t, d.Entries[0])
			o := d.Entries[0].Observation
			if o.ToolName != tt.tool || o.MemoryType != tt.typ || o.SessionID != "native-demo" || o.Source != SourceNative {
				t.Errorf("got %s %s session %q source %q; want %s %s native-demo native", o.ToolName, o.MemoryType, o.SessionID, o.Source, tt.tool, tt.typ)
			}
			if !o.Timestamp.Equal(now) {
				t.Errorf("timestamp = %s, want now (%s) when the input has none", o.Timestamp, now)
			}
		})
	}
}

func TestDecodeNativeKeepsIDAndTime(t *testing.T) {
	const uuid4 = "5F0C3A52-1B2D-4E8F-9A6B-7C8D9E0F1A2B"
	tests := []struct {
		name     string
		id, ts   string
		wantID   string
		wantTime time.Time
	}{
		{"Python buffer line: uuid4 and isoformat without zone", uuid4, "2025-01-02T03:04:05.123456",
			strings.ToLower(uuid4), time.Date(2025, 1, 2, 3, 4, 5, 123456000, time.UTC)},
		{"Python isoformat with +00:00", uuid4, "2025-01-02T03:04:05.123456+00:00",
			strings.ToLower(uuid4), time.Date(2025, 1, 2, 3, 4, 5, 123456000, time.UTC)},
		{"isoformat without fraction", uuid4, "2025-01-02T03:04:05",
			strings.ToLower(uuid4), time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)},
		{"RFC 3339 Z and a lower-case ULID", "01jgkx2a3b4c5d6e7f8g9h0jkm", "2025-01-02T03:04:05Z",
			"01JGKX2A3B4C5D6E7F8G9H0JKM", time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)},
		{"RFC 3339 with an offset becomes UTC", "01JGKX2A3B4C5D6E7F8G9H0JKM", "2025-01-02T05:04:05.5+02:00",
			"01JGKX2A3B4C5D6E7F8G9H0JKM", time.Date(2025, 1, 2, 3, 4, 5, 500_000_000, time.UTC)},
		{"1970 itself", uuid4, "1970-01-01T00:00:00Z",
			strings.ToLower(uuid4), time.Unix(0, 0).UTC()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := `{"id": "` + tt.id + `", "timestamp": "` + tt.ts + `", "tool_name": "read_file", "arguments": {"path": "a.md"}, "result": "` + longResult + `", "memory_type": "semantic", "summary": null}`
			e := decodeOne(t, []byte(line))
			o := e.Observation
			if o.ID != tt.wantID {
				t.Errorf("id = %q, want %q", o.ID, tt.wantID)
			}
			if !o.Timestamp.Equal(tt.wantTime) || o.Timestamp.Location() != time.UTC {
				t.Errorf("timestamp = %s, want %s in UTC", o.Timestamp, tt.wantTime)
			}
			if o.SessionID != "" {
				t.Errorf("session = %q; a buffer line names none, the journal assigns it", o.SessionID)
			}
			if o.Summary != "read_file path=a.md" {
				t.Errorf("summary = %q; a null summary must be made", o.Summary)
			}
		})
	}
}

func TestDecodeNativeFields(t *testing.T) {
	line := `{"tool_name":"Bash","arguments":{"command":"make"},"result":"` + longResult + `","session_id":"s1",
		"source":"codex","tool_use_id":"call_1","cwd":"/w","agent_id":"a1","duration_ms":12.7,"error":"boom","summary":"my summary"}`
	o := decodeOne(t, []byte(line)).Observation
	ms := int64(12)
	want := memory.Observation{ID: o.ID, SessionID: "s1", Timestamp: now.UTC(), ToolName: "Bash",
		Arguments: json.RawMessage(`{"command":"make"}`), Result: json.RawMessage(`"` + longResult + `"`),
		MemoryType: memory.Episodic, Summary: "my summary", Source: "codex", ToolUseID: "call_1",
		Cwd: "/w", AgentID: "a1", DurationMS: &ms, Error: "boom"}
	if !reflect.DeepEqual(*o, want) {
		t.Errorf("got  %+v\nwant %+v", *o, want)
	}
}

func TestDecodeNativeDuration(t *testing.T) {
	tests := []struct {
		raw  string
		want *int64
	}{
		{`0`, new(int64)},
		{`1500`, ptr(int64(1500))},
		{`-1`, nil},
		{`1e300`, nil},
		{`null`, nil},
	}
	for _, tt := range tests {
		line := `{"tool_name":"x","arguments":{},"duration_ms":` + tt.raw + `}`
		o := decodeOne(t, []byte(line)).Observation
		if !reflect.DeepEqual(o.DurationMS, tt.want) {
			t.Errorf("duration_ms %s → %v, want %v", tt.raw, o.DurationMS, tt.want)
		}
	}
}

func TestDecodeNativeMemoryType(t *testing.T) {
	tests := []struct {
		tool, given string
		want        memory.Type
	}{
		{"Read", "procedural", memory.Procedural}, // a valid type wins over the classifier
		{"Bash", "semantic", memory.Semantic},
		{"Read", "", memory.Semantic},
		{"Read", "bogus", memory.Semantic}, // an invalid one is replaced by the classifier's
		{"Read", "Procedural", memory.Semantic},
		{"run_tests", "working", memory.Episodic},
		{"mcp__github__search_issues", "", memory.Semantic},
	}
	for _, tt := range tests {
		line := `{"tool_name":"` + tt.tool + `","arguments":{},"result":"` + longResult + `","memory_type":"` + tt.given + `"}`
		o := decodeOne(t, []byte(line)).Observation
		if o.MemoryType != tt.want {
			t.Errorf("%s with memory_type %q → %q, want %q", tt.tool, tt.given, o.MemoryType, tt.want)
		}
	}
}

func TestDecodeNativeArguments(t *testing.T) {
	tests := []struct {
		name, raw, want string
	}{
		{"absent", ``, `{}`},
		{"null", `null`, `{}`},
		{"empty object", `{}`, `{}`},
		{"object compacted", `{ "path" : "a.md",  "n" : [1, 2] }`, `{"path":"a.md","n":[1,2]}`},
		{"string", `"ls -la"`, `{"value":"ls -la"}`},
		{"array", `[1, "two", {"three": 3}]`, `{"value":[1,"two",{"three":3}]}`},
		{"number", `42`, `{"value":42}`},
		{"bool", `false`, `{"value":false}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := `{"tool_name":"x","result":"` + longResult + `"`
			if tt.raw != "" {
				line += `,"arguments":` + tt.raw
			}
			line += `}`
			o := decodeOne(t, []byte(line)).Observation
			if string(o.Arguments) != tt.want {
				t.Errorf("arguments %s → %s, want %s", tt.raw, o.Arguments, tt.want)
			}
		})
	}
}

func TestDecodeNativeResult(t *testing.T) {
	tests := []struct {
		name, raw, want string
	}{
		{"absent", ``, ``},
		{"null", `null`, ``},
		{"empty string is no result, kept", `""`, `""`},
		{"object compacted", `{ "rows" : [ "` + longResult + `" ] }`, `{"rows":["` + longResult + `"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := `{"tool_name":"x","arguments":{}`
			if tt.raw != "" {
				line += `,"result":` + tt.raw
			}
			line += `}`
			o := decodeOne(t, []byte(line)).Observation
			if string(o.Result) != tt.want {
				t.Errorf("result %s → %s, want %s", tt.raw, o.Result, tt.want)
			}
		})
	}
}

func TestDecodeNativeSkipped(t *testing.T) {
	tests := []struct {
		name, line, reason string
	}{
		{"ignored tool", `{"tool_name":"pwd","arguments":{},"result":"` + longResult + `"}`, "ignored"},
		{"ignored tool in capitals", `{"tool_name":"WHOAMI","arguments":{},"result":"` + longResult + `"}`, "ignored"},
		{"short string result", `{"tool_name":"read_file","arguments":{},"result":"tiny"}`, "under 50"},
		{"49 runes", `{"tool_name":"read_file","arguments":{},"result":"` + strings.Repeat("é", 49) + `"}`, "under 50"},
		{"short JSON result", `{"tool_name":"read_file","arguments":{},"result":{"ok":true}}`, "under 50"},
		{"ignored even when failed", `{"tool_name":"ping","arguments":{},"error":"unreachable"}`, "ignored"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Decode([]byte(tt.line), defaultPolicy(), now)
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Entries) != 0 {
				t.Errorf("%d entries, want none", len(d.Entries))
			}
			if len(d.Skipped) != 1 || !strings.Contains(d.Skipped[0], tt.reason) {
				t.Errorf("Skipped = %q, want one reason with %q", d.Skipped, tt.reason)
			}
		})
	}
}

func TestDecodeNativeKept(t *testing.T) {
	for _, line := range []string{
		`{"tool_name":"read_file","arguments":{},"result":"` + strings.Repeat("é", 50) + `"}`,
		`{"tool_name":"read_file","arguments":{}}`,
		`{"tool_name":"read_file","arguments":{},"result":"tiny","error":"tiny"}`,
		`{"tool_name":"echoes","arguments":{},"result":"` + longResult + `"}`,
	} {
		decodeOne(t, []byte(line))
	}
}

func TestDecodeRefusesTimeBefore1970(t *testing.T) {
	for _, line := range []string{
		`{"tool_name":"x","arguments":{},"timestamp":"1969-12-31T23:59:59.999Z"}`,
		`{"tool_name":"x","arguments":{},"timestamp":"0001-01-01T00:00:00"}`,
		`{"tool_name":"x","arguments":{},"timestamp":"1970-01-01T00:30:00+01:00"}`,
		`{"event":"Stop","session_id":"s","timestamp":"1969-07-20T20:17:40Z"}`,
	} {
		d, err := Decode([]byte(line), defaultPolicy(), now)
		if err == nil || !strings.Contains(err.Error(), "1970") {
			t.Errorf("Decode(%s) = %d entries, %v; want an error about 1970", line, len(d.Entries), err)
		}
	}
}

func TestDecodeEventLineRoundTrip(t *testing.T) {
	tests := []memory.Event{
		{ID: "01JGKX2A3B4C5D6E7F8G9H0JKM", SessionID: "s-1", Timestamp: time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.UTC),
			Name: "UserPromptSubmit", Text: "Add an RSS feed"},
		{ID: "01JGKX2A3B4C5D6E7F8G9H0JKN", SessionID: sampleSession, Timestamp: time.Date(2025, 1, 2, 3, 4, 6, 0, time.UTC),
			Name: "SessionStart", Attrs: map[string]string{"model": "claude-opus-4-1", "start_source": "startup"}, Source: SourceClaudeCode},
		{ID: "5f0c3a52-1b2d-4e8f-9a6b-7c8d9e0f1a2b", SessionID: "s-1", Timestamp: time.Date(2025, 1, 2, 3, 4, 7, 0, time.UTC),
			Name: "SessionEnd", Text: "other\nwith a newline"},
	}
	for _, want := range tests {
		t.Run(want.Name, func(t *testing.T) {
			line, err := json.Marshal(want)
			if err != nil {
				t.Fatal(err)
			}
			e := decodeOne(t, line)
			if e.Event == nil {
				t.Fatalf("%s decoded to an observation", line)
			}
			got := *e.Event
			if !got.Timestamp.Equal(want.Timestamp) {
				t.Errorf("timestamp = %s, want %s", got.Timestamp, want.Timestamp)
			}
			got.Timestamp = want.Timestamp
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s decoded to\n %+v\nwant %+v", line, got, want)
			}
		})
	}
	// The shape `agmem replay --json --events` writes, typed by hand with a lower-case id.
	line := `{"id":"01jgkx2a3b4c5d6e7f8g9h0jkm","session_id":"s-2","timestamp":"2025-01-02T03:04:05Z","event":"UserPromptSubmit","text":"hello"}`
	ev := decodeOne(t, []byte(line)).Event
	want := memory.Event{ID: "01JGKX2A3B4C5D6E7F8G9H0JKM", SessionID: "s-2",
		Timestamp: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), Name: "UserPromptSubmit", Text: "hello"}
	if ev == nil || !reflect.DeepEqual(*ev, want) {
		t.Errorf("decoded to %+v, want %+v", ev, want)
	}
}

func TestDecodeEventLineFillsIDAndTime(t *testing.T) {
	ev := decodeOne(t, []byte(`{"event":"Stop","session_id":"s"}`)).Event
	if ev.ID == "" || !ev.Timestamp.Equal(now) {
		t.Errorf("event without id and time = %+v; want a new id and now", ev)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", ``, "not a JSON object"},
		{"blank", " \n\t ", "not a JSON object"},
		{"array", `[{"tool_name":"x"}]`, "not a JSON object"},
		{"string", `"tool_name"`, "not a JSON object"},
		{"number", `42`, "not a JSON object"},
		{"null", `null`, "not a JSON object"},
		{"truncated object", `{"tool_name":`, "not valid JSON"},
		{"trailing garbage", `{"tool_name":"x"} {}`, "not valid JSON"},
		{"nested past what JSON readers take", `{"tool_name":"x","arguments":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`, "nested deeper than 10000 containers"},
		{"neither tool_name nor hook_event_name nor event", `{"name":"x","arguments":{}}`, "neither"},
		{"empty object", `{}`, "neither"},
		{"null tool_name", `{"tool_name":null,"arguments":{}}`, "tool_name"},
		{"empty tool_name", `{"tool_name":"","arguments":{}}`, "tool_name"},
		{"tool_name not a string", `{"tool_name":7}`, "native observation"},
		{"tool_name too long", `{"tool_name":"` + strings.Repeat("t", 513) + `"}`, "longer than"},
		{"bad id", `{"tool_name":"x","id":"../../x"}`, "neither a ULID nor a UUID"},
		{"bad timestamp", `{"tool_name":"x","timestamp":"yesterday"}`, "not RFC 3339"},
		{"event without a name", `{"event":"","session_id":"s"}`, "empty"},
		{"event with a bad id", `{"event":"Stop","id":"../../x"}`, "neither a ULID nor a UUID"},
		{"event with a bad timestamp", `{"event":"Stop","timestamp":"03/04/2025"}`, "not RFC 3339"},
		{"hook with a tool_name that is not a string", `{"hook_event_name":"PostToolUse","tool_name":7}`, "hook payload"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Decode([]byte(tt.in), defaultPolicy(), now)
			if err == nil {
				t.Fatalf("Decode(%q) = %+v, want an error", tt.in, d)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Decode(%q) error %q does not say %q", tt.in, err, tt.want)
			}
			if len(d.Entries) != 0 {
				t.Errorf("Decode(%q) returned entries with its error", tt.in)
			}
		})
	}
}

// Session ids travel into journal keys, paths and trailers: an input that names a
// session must name a usable one, or be refused on its own line rather than make the
// journal refuse a whole transaction of good lines later.
func TestDecodeRefusesBadSessionID(t *testing.T) {
	for _, line := range []string{
		`{"tool_name":"x","arguments":{},"session_id":"a\nb"}`,
		`{"tool_name":"x","arguments":{},"session_id":"` + strings.Repeat("s", 201) + `"}`,
		`{"event":"Stop","session_id":"a\u0000b"}`,
		`{"hook_event_name":"Stop","session_id":"a\rAgmem-Batch: x"}`,
		`{"hook_event_name":"PostToolUse","session_id":"a\u007f","tool_name":"Bash","tool_input":{}}`,
	} {
		d, err := Decode([]byte(line), defaultPolicy(), now)
		if err == nil {
			t.Errorf("Decode(%s) = %d entries, want an error about the session id", line, len(d.Entries))
		}
	}
}
