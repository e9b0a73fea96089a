package daemon

import (
	"strings"
	"testing"
)

func TestReadLines(t *testing.T) {
	long := strings.Repeat("x", 40)
	tests := []struct {
		name  string
		input string
		want  []string // "LONG" for a line passed over
		end   int64    // bytes taken
	}{
		{"nothing", "", nil, 0},
		{"a line still being written waits", `{"a":1}`, nil, 0},
		{"complete lines, the partial last one waits", "{\"a\":1}\n{\"b\":2}\n{\"c\"", []string{"{\"a\":1}\n", "{\"b\":2}\n"}, 16},
		{"empty and CRLF lines are lines", "\n{}\r\n", []string{"\n", "{}\r\n"}, 5},
		{"a line over the limit is passed over", "{}\n" + long + "\n{}\n", []string{"{}\n", "LONG", "{}\n"}, 3 + 41 + 3},
		{"a long line still being written waits", "{}\n" + long, []string{"{}\n"}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const at = 100 // the reader starts at this offset of its file
			lines, end, err := readLines(strings.NewReader(tt.input), at, 32)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			next := int64(at)
			for _, l := range lines {
				if l.at != next {
					t.Errorf("line %q at %d, want %d", l.text, l.at, next)
				}
				if l.long {
					got = append(got, "LONG")
					next += int64(len(long)) + 1
				} else {
					got = append(got, string(l.text))
					next += int64(len(l.text))
				}
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || end != at+tt.end {
				t.Errorf("readLines = %q up to %d, want %q up to %d", got, end, tt.want, at+tt.end)
			}
		})
	}
}

func TestReadLinesStopsAfterABatch(t *testing.T) {
	line := strings.Repeat("y", 999) + "\n"
	input := strings.Repeat(line, 2*batchBytes/len(line))
	lines, end, err := readLines(strings.NewReader(input), 0, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(lines); n == 0 || n*len(line) < batchBytes || n*len(line) >= batchBytes+len(line) || end != int64(n*len(line)) {
		t.Errorf("one batch took %d lines up to %d; want just over %d bytes", n, end, batchBytes)
	}
	// One line larger than a batch is still taken whole.
	huge := strings.Repeat("z", 2*batchBytes) + "\n"
	lines, end, _ = readLines(strings.NewReader(huge+"{}\n"), 0, 64<<20)
	if len(lines) != 1 || end != int64(len(huge)) {
		t.Errorf("a line larger than a batch: %d lines up to %d, want 1 up to %d", len(lines), end, len(huge))
	}
}
