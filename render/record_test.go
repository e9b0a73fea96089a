package render

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agmem/agmem/memory"
)

func TestSessionRecordRoundTrip(t *testing.T) {
	results := []string{``, `null`, `"plain text"`, `"line\nbreak \u2028 <b>&amp;</b>"`, `42`, `-1.5e-7`,
		`true`, `false`, `[]`, `[1,"two",[3],{"four":4}]`, `{}`, `{"nested":{"a":[null,true]},"emoji":"🦫"}`}
	var entries []memory.Entry
	for i, res := range results {
		o := &memory.Observation{
			ID: memory.NewID(when), SessionID: "s-1", Timestamp: when.Add(time.Duration(i) * time.Millisecond),
			ToolName: "mcp__x__get_" + strings.Repeat("y", i), Arguments: json.RawMessage(`{"i":` + string(rune('0'+i%10)) + `}`),
			Result: rawOrNil(res), MemoryType: memory.Semantic, Summary: "sum\nmary",
		}
		if i%2 == 0 {
			o.Source, o.ToolUseID, o.Cwd, o.AgentID, o.DurationMS, o.Error = "claude-code", "toolu_1", "/tmp", "a", ms(int64(i)), "boom"
		}
		entries = append(entries, memory.Entry{Observation: o})
	}
	entries = append(entries,
		memory.Entry{Event: &memory.Event{ID: memory.NewID(when), SessionID: "s-1", Timestamp: when, Name: "SessionStart",
			Attrs: map[string]string{"model": "claude-opus", "source": "startup", "cwd": "/home/ana"}, Source: "claude-code"}},
		memory.Entry{Event: &memory.Event{ID: memory.NewID(when), SessionID: "s-1", Timestamp: when, Name: "UserPromptSubmit",
			Text: "fix the\r\nbuild\n{\"observation\":{}}"}},
		memory.Entry{Event: &memory.Event{ID: memory.NewID(when), SessionID: "s-1", Timestamp: when, Name: "SessionEnd"}},
	)

	data := SessionRecord(entries)
	if n := strings.Count(string(data), "\n"); n != len(entries) || !strings.HasSuffix(string(data), "\n") {
		t.Fatalf("record has %d lines for %d entries:\n%s", n, len(entries), data)
	}
	got, err := ParseSessionRecord(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, entries) {
		for i := range entries {
			if !reflect.DeepEqual(got[i], entries[i]) {
				t.Errorf("entry %d:\n got %+v\nwant %+v", i, got[i], entries[i])
			}
		}
	}
	if !strings.Contains(string(data), "<b>&amp;</b>") {
		t.Errorf("record escapes HTML; it should read as written:\n%s", data)
	}
}

// rawOrNil is how an absent result decodes: nil, not an empty slice.
func rawOrNil(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

func TestSessionRecordKeepsInvalidJSON(t *testing.T) {
	o := &memory.Observation{ID: memory.NewID(when), SessionID: "s", Timestamp: when, ToolName: "x",
		Arguments: json.RawMessage(`{"a":`), Result: json.RawMessage(`not json`)}
	got, err := ParseSessionRecord(SessionRecord([]memory.Entry{{Observation: o}}))
	if err != nil {
		t.Fatal(err)
	}
	if a, r := string(got[0].Observation.Arguments), got[0].Observation.Result; a != `"{\"a\":"` || memory.JSONText(r) != "not json" {
		t.Errorf("invalid JSON came back as %s and %s", a, r)
	}
}

func TestParseSessionRecord(t *testing.T) {
	good := `{"event":{"id":"01JPB2N3V4W5X6Y7Z8A9B0C1D2","session_id":"s","timestamp":"2026-03-14T09:26:53Z","event":"Stop"}}`
	tests := []struct {
		name, data string
		n          int
		err        string
	}{
		{"empty", "", 0, ""},
		{"blank lines and CRLF", "\n" + good + "\r\n\r\n  \n" + good, 2, ""},
		{"bad JSON", good + "\n\n{oops\n", 0, "line 3"},
		{"neither kind", good + "\n{}\n", 0, "line 2: entry must hold exactly one"},
		{"both kinds", `{"event":{"session_id":"s"},"observation":{"session_id":"s","tool_name":"x"}}`, 0, "line 1"},
		{"no session", `{"observation":{"tool_name":"x"}}`, 0, "line 1: session id is empty"},
	}
	for _, tc := range tests {
		got, err := ParseSessionRecord([]byte(tc.data))
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.err)
		case len(got) != tc.n:
			t.Errorf("%s: %d entries, want %d", tc.name, len(got), tc.n)
		}
	}
}

// TestEachRecordEntry: each entry comes with its line, as the record holds it, without
// its line ending; the entries before a bad line come first, and fn's error stops it.
func TestEachRecordEntry(t *testing.T) {
	good := `{"event":{"id":"01JPB2N3V4W5X6Y7Z8A9B0C1D2","session_id":"s","timestamp":"2026-03-14T09:26:53Z","event":"Stop"}}`
	other := strings.Replace(good, "Stop", "SessionEnd", 1)
	var lines []string
	err := EachRecordEntry([]byte(good+"\r\n\n  "+other+"\n{oops\n"+good), func(e memory.Entry, line []byte) error {
		lines = append(lines, e.Event.Name+" "+string(line))
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "line 4") {
		t.Errorf("error %v, want one of line 4", err)
	}
	if want := []string{"Stop " + good, "SessionEnd " + other}; !reflect.DeepEqual(lines, want) {
		t.Errorf("lines %q, want %q", lines, want)
	}
	stop := errors.New("enough")
	if err := EachRecordEntry([]byte(good+"\n"+other), func(memory.Entry, []byte) error { return stop }); err != stop {
		t.Errorf("fn's error came back as %v", err)
	}
}
