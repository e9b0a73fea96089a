package memory

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

var at = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func obs(session, tool string) *Observation {
	return &Observation{ID: "01ARZ3NDEKTSV4RRFFQ69G5FAV", SessionID: session, Timestamp: at,
		ToolName: tool, Arguments: json.RawMessage(`{}`), MemoryType: Episodic, Summary: tool}
}

func event(session, name string) *Event {
	return &Event{ID: "01ARZ3NDEKTSV4RRFFQ69G5FAW", SessionID: session, Timestamp: at, Name: name}
}

func TestEntryValidate(t *testing.T) {
	tests := []struct {
		name    string
		entry   Entry
		wantErr string // "" means valid
	}{
		{"observation", Entry{Observation: obs("s1", "Read")}, ""},
		{"event", Entry{Event: event("s1", "SessionStart")}, ""},
		{"unicode session", Entry{Observation: obs("séance-日本", "Read")}, ""},
		{"neither", Entry{}, "exactly one"},
		{"both", Entry{Observation: obs("s1", "Read"), Event: event("s1", "Stop")}, "exactly one"},
		{"observation without session", Entry{Observation: obs("", "Read")}, "session id is empty"},
		{"event without session", Entry{Event: event("", "Stop")}, "session id is empty"},
		{"observation with a newline in its session", Entry{Observation: obs("a\nb", "Read")}, "control character"},
		{"event with NUL in its session", Entry{Event: event("a\x00b", "Stop")}, "control character"},
		{"session too long", Entry{Observation: obs(strings.Repeat("s", MaxSessionIDLen+1), "Read")}, "longer than"},
		{"observation without tool name", Entry{Observation: obs("s1", "")}, "tool_name is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.entry.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.wantErr != "" && err == nil:
				t.Errorf("Validate() = nil, want an error containing %q", tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Errorf("Validate() = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestEntrySetSession(t *testing.T) {
	o := Entry{Observation: obs("", "Read")}
	e := Entry{Event: event("", "Stop")}
	entries := []Entry{o, e}
	// SetSession works on a copy of the Entry (as a range loop gives) and still reaches
	// the observation or event it points at.
	for _, en := range entries {
		en.SetSession("s-42")
	}
	if o.Observation.SessionID != "s-42" || o.Session() != "s-42" {
		t.Errorf("observation session = %q, want s-42", o.Observation.SessionID)
	}
	if e.Event.SessionID != "s-42" || e.Session() != "s-42" {
		t.Errorf("event session = %q, want s-42", e.Event.SessionID)
	}
	for _, en := range entries {
		if err := en.Validate(); err != nil {
			t.Errorf("Validate() after SetSession = %v", err)
		}
	}
	// It replaces a session already set.
	o.SetSession("other")
	if o.Session() != "other" {
		t.Errorf("Session() = %q after SetSession(other)", o.Session())
	}
}

func TestEntryAccessors(t *testing.T) {
	later := at.Add(time.Hour)
	o := obs("s-obs", "Read")
	o.Source = "claude-code"
	ev := event("s-ev", "Stop")
	ev.Timestamp = later
	ev.Source = "native"
	tests := []struct {
		entry               Entry
		id, session, source string
		time                time.Time
	}{
		{Entry{Observation: o}, o.ID, "s-obs", "claude-code", at},
		{Entry{Event: ev}, ev.ID, "s-ev", "native", later},
	}
	for _, tt := range tests {
		if got := tt.entry.ID(); got != tt.id {
			t.Errorf("ID() = %q, want %q", got, tt.id)
		}
		if got := tt.entry.Session(); got != tt.session {
			t.Errorf("Session() = %q, want %q", got, tt.session)
		}
		if got := tt.entry.Source(); got != tt.source {
			t.Errorf("Source() = %q, want %q", got, tt.source)
		}
		if got := tt.entry.Time(); !got.Equal(tt.time) {
			t.Errorf("Time() = %s, want %s", got, tt.time)
		}
	}
}

func TestEntryJSONRoundTrip(t *testing.T) {
	d := int64(950)
	o := obs("s1", "Bash")
	o.Result = json.RawMessage(`{"stdout":"ok"}`)
	o.DurationMS = &d
	o.Error = "exit 1"
	o.ToolUseID = "toolu_1"
	ev := event("s1", "UserPromptSubmit")
	ev.Text = "add a feed"
	ev.Attrs = map[string]string{"model": "m"}
	for _, in := range []Entry{{Observation: o}, {Event: ev}} {
		raw, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		var out Entry
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("decode %s: %v", raw, err)
		}
		if !reflect.DeepEqual(in, out) {
			t.Errorf("round trip of %s changed the entry:\n got %#v\nwant %#v", raw, out, in)
		}
	}
}

func TestParseType(t *testing.T) {
	tests := []struct {
		in   string
		want Type
		ok   bool
	}{
		{"episodic", Episodic, true},
		{"semantic", Semantic, true},
		{"procedural", Procedural, true},
		{"Episodic", "", false},
		{"", "", false},
		{"working", "", false},
	}
	for _, tt := range tests {
		got, ok := ParseType(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseType(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestJSONText(t *testing.T) {
	tests := []struct {
		raw  string
		want string
	}{
		{``, ""},
		{`null`, ""},
		{`""`, ""},
		{`"line\nbreak"`, "line\nbreak"},
		{`{"a":1}`, `{"a":1}`},
		{`[1,2]`, `[1,2]`},
		{`42`, `42`},
		{"\"tab\\t, \\u00e9, \\ud83e\\udd6b, \\ud800 alone, \xff\" ", "tab\t, é, 🥫, \ufffd alone, \ufffd"},
		{`"a" "b"`, `"a" "b"`},
		{`"unclosed`, `"unclosed`},
		{`"bad \q escape"`, `"bad \q escape"`},
	}
	for _, tt := range tests {
		var want string
		if json.Unmarshal([]byte(tt.raw), &want) != nil || tt.raw == "null" { // what encoding/json makes of a string
			want = tt.raw
		}
		if tt.raw != "" && tt.raw != "null" && tt.raw[0] == '"' && want != tt.want {
			t.Errorf("%s: the test wants %q where encoding/json unquotes %q", tt.raw, tt.want, want)
		}
		if got := JSONText(json.RawMessage(tt.raw)); got != tt.want {
			t.Errorf("JSONText(%s) = %q, want %q", tt.raw, got, tt.want)
		}
		o := Observation{Result: json.RawMessage(tt.raw)}
		if got := o.ResultText(); got != tt.want {
			t.Errorf("ResultText() of %s = %q, want %q", tt.raw, got, tt.want)
		}
	}
}
