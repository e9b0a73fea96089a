package capture

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agmem/agmem/memory"
)

// TestRedacted: an entry another agmem wrote with a secret in it (its redaction off, an
// older agmem, a hand-made record) is redacted as this one records; one this agmem
// recorded, cut short and redacted already, comes back as it was.
func TestRedacted(t *testing.T) {
	p := DefaultPolicy()
	p.MaxValue = 1024
	pat := "ghp_1234567890abcdefghijABCDEFGHIJ123456"
	raw := memory.Entry{Observation: &memory.Observation{ID: "o1", SessionID: "s", Timestamp: time.Unix(1, 0).UTC(),
		ToolName: "Bash", Arguments: json.RawMessage(`{"command":"gh auth login --with-token ` + pat + `"}`),
		Result: json.RawMessage(`"logged in"`), Summary: "Bash gh auth login", Redactions: 2}}
	got := Redacted(raw, p)
	if all, _ := json.Marshal(got); strings.Contains(string(all), pat) || got.Observation.Redactions != 3 {
		t.Errorf("redactions %d, %s", got.Observation.Redactions, all)
	}
	if !strings.Contains(string(raw.Observation.Arguments), pat) {
		t.Error("the entry given was changed")
	}
	ev := Redacted(memory.Entry{Event: &memory.Event{Name: "UserPromptSubmit", SessionID: "s", Timestamp: time.Unix(1, 0).UTC(),
		Text: "use " + pat, Attrs: map[string]string{"cwd": "/w"}}}, p)
	if strings.Contains(ev.Event.Text, pat) || ev.Event.Redactions != 1 {
		t.Errorf("event %+v", ev.Event)
	}

	long := strings.Repeat("output line ", 200)
	straddles := strings.Repeat("x", 1010) + " " + pat + " " + long // a secret across the cut
	d, err := Decode([]byte(`{"tool_name":"Bash","session_id":"s","arguments":{"command":"curl -H 'Authorization: Bearer abcdef123456' x","note":"`+long+`"},"result":"`+straddles+`"}`), p, time.Now())
	if err != nil || len(d.Entries) != 1 {
		t.Fatal(d, err)
	}
	recorded := d.Entries[0]
	if len(recorded.Observation.Truncated) == 0 || recorded.Observation.Redactions == 0 {
		t.Fatalf("the recorded entry was not cut and redacted: %+v", recorded.Observation)
	}
	// A value captured for the first time is cut at the bound, whatever mark it ends
	// with: only Redacted takes one for a cut made before.
	faked := strings.Repeat("y", 1090) + `\n[TRUNCATED: 5 bytes]`
	d, err = Decode([]byte(`{"tool_name":"Bash","session_id":"s","result":"`+faked+`"}`), p, time.Now())
	if err != nil || len(d.Entries) != 1 {
		t.Fatal(d, err)
	}
	if got := d.Entries[0].Observation.ResultText(); !strings.HasSuffix(got, "[TRUNCATED: 1111 bytes]") {
		t.Errorf("a value ending as if cut was not cut: %d bytes, ending %q", len(got), got[len(got)-30:])
	}
	if again := Redacted(recorded, p); !reflect.DeepEqual(again, recorded) {
		a, _ := json.Marshal(again)
		r, _ := json.Marshal(recorded)
		t.Errorf("recorded by agmem, redacted again:\n%s\nwas\n%s", a, r)
	}
}
