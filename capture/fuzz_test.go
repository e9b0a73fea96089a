package capture

import (
	"encoding/json"
	"testing"
	"time"
	"unicode/utf8"

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
