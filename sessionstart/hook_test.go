package sessionstart

import (
	"os"
	"testing"
)

// TestReadPayloadOfAnOpenStdin: a payload is read to its end, whether or not its writer
// closes stdin after it, and a stdin left open and unwritten gives none.
func TestReadPayloadOfAnOpenStdin(t *testing.T) {
	const payload = `{"hook_event_name":"SessionStart","session_id":"s1","cwd":"/w"}`
	for _, tc := range []struct {
		name, written string
		closed        bool
		want          string
	}{
		{"written and closed", payload + "\n", true, payload},
		{"written and held open", payload, false, payload},
		{"held open, unwritten", "", false, ""},
		{"closed, unwritten", "", true, ""},
		{"not JSON", "not a payload", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			defer w.Close()
			if _, err := w.WriteString(tc.written); err != nil {
				t.Fatal(err)
			}
			if tc.closed {
				w.Close()
			}
			if got := string(ReadPayload(r)); got != tc.want {
				t.Errorf("ReadPayload = %q, want %q", got, tc.want)
			}
		})
	}
}
