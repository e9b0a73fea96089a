package record

import (
	"strings"
	"testing"

	"github.com/agmem/agmem/journal"
)

// follow runs Follow on input, read from offset 100 of its file, and checks the mark
// the journal holds after it.
func follow(t *testing.T, r *Recorder, input string) (end int64, out Outcome) {
	t.Helper()
	const at = 100
	end, out, err := r.Follow("/f.jsonl", strings.NewReader(input), at, func(end int64) journal.WatchMark {
		return journal.WatchMark{Offset: end, File: "f"}
	})
	if err != nil {
		t.Fatal(err)
	}
	marks, err := r.journal.WatchMarks()
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := marks["/f.jsonl"]; end != at && (!ok || m.Offset != end) {
		t.Errorf("the journal's mark is %+v, want %d", m, end)
	}
	return end - at, out
}

func TestFollowTakesCompleteLines(t *testing.T) {
	// A result of 50 characters at least: shorter ones are not worth capturing.
	call := `{"tool_name":"t","result":"` + strings.Repeat("r", 50) + `"}` + "\n"
	long := strings.Repeat("x", 200)
	tests := []struct {
		name             string
		input            string
		recorded, refuse int
		end              int64 // bytes taken
	}{
		{"nothing", "", 0, 0, 0},
		{"a line still being written waits", `{"a":1}`, 0, 0, 0},
		{"complete lines, the partial last one waits", call + call + `{"c"`, 2, 0, 2 * int64(len(call))},
		{"blank and CRLF lines are lines", "\n" + strings.TrimSuffix(call, "\n") + "\r\n", 1, 0, 1 + int64(len(call)) + 1},
		{"a bad line is refused, not in the way", "{}\n" + call, 1, 1, 3 + int64(len(call))},
		{"a line over the limit is passed over", call + long + "\n" + call, 2, 1, 2*int64(len(call)) + 201},
		{"a long line still being written waits", call + long, 1, 0, int64(len(call))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRecorder(t)
			r.maxInput = 128
			end, out := follow(t, r, tt.input)
			if len(out.Recorded) != tt.recorded || len(out.Refused) != tt.refuse || end != tt.end {
				t.Errorf("Follow recorded %d, refused %q, took %d bytes; want %d, %d, %d",
					len(out.Recorded), out.Refused, end, tt.recorded, tt.refuse, tt.end)
			}
		})
	}
}

func TestFollowStopsAfterABatch(t *testing.T) {
	r := newRecorder(t)
	line := `{"tool_name":"t","result":"` + strings.Repeat("y", 970) + `"}` + "\n"
	end, out := follow(t, r, strings.Repeat(line, 2*followBatch/len(line)))
	if n := len(out.Recorded); n == 0 || n*len(line) < followBatch || n*len(line) >= followBatch+len(line) || end != int64(n*len(line)) {
		t.Errorf("one batch took %d lines up to %d; want just over %d bytes", n, end, followBatch)
	}
	// One line larger than a batch is still taken whole.
	r = newRecorder(t)
	huge := `{"tool_name":"t","result":"` + strings.Repeat("z", 2*followBatch) + `"}` + "\n"
	if end, out := follow(t, r, huge+line); len(out.Recorded) != 1 || end != int64(len(huge)) {
		t.Errorf("a line larger than a batch: %d lines up to %d, want 1 up to %d", len(out.Recorded), end, len(huge))
	}
}

// While capture is off, the mark moves past the lines all the same: none is recorded.
func TestFollowWhileOff(t *testing.T) {
	r := newRecorder(t)
	r.off = "capture.enabled is false"
	call := `{"tool_name":"t","result":"` + strings.Repeat("r", 50) + `"}` + "\n"
	if end, out := follow(t, r, call+call); end != 2*int64(len(call)) || len(out.Recorded) != 0 || len(out.NotCaptured) != 1 {
		t.Errorf("Follow while off: %d bytes, %+v", end, out)
	}
}
