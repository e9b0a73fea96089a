package render

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/agmem/agmem/memory"
)

func TestSplitRecord(t *testing.T) {
	tests := []struct {
		name, data string
		limit      int
		want       []string
	}{
		{"empty", "", 8, []string{""}},
		{"fits", "ab\ncd\n", 8, []string{"ab\ncd\n"}},
		{"exactly the limit", "abc\nefg\n", 8, []string{"abc\nefg\n"}},
		{"cut after a line", "abc\nefg\nhi\n", 8, []string{"abc\nefg\n", "hi\n"}},
		{"a line too long for a part", "abcdefghijkl\nx\n", 5, []string{"abcde", "fghij", "kl\nx\n"}},
		{"long line after short ones", "a\nbcdefghij\n", 4, []string{"a\n", "bcde", "fghi", "j\n"}},
	}
	for _, tc := range tests {
		var got []string
		for _, p := range splitRecord([]byte(tc.data), tc.limit) {
			got = append(got, string(p))
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestSessionRecordPartsJoinToTheRecord(t *testing.T) {
	var entries []memory.Entry
	for i := range 40 {
		entries = append(entries, memory.Entry{Observation: &memory.Observation{
			ID: memory.NewID(when), SessionID: "s/1", Timestamp: when, ToolName: "Read",
			Arguments: json.RawMessage(`{}`), Result: json.RawMessage(`"` + strings.Repeat("x", i*(MaxRecordPart/400)) + `"`),
		}})
	}
	parts := SessionRecordParts(Layout1.SessionRecordPath("s/1", "01JPB2N3V4W5X6Y7Z8A9B0C1D2"), entries)
	if len(parts) < 2 {
		t.Fatalf("%d part(s) for a record of %d bytes", len(parts), len(SessionRecord(entries)))
	}
	var joined []byte
	var names []string
	for i, p := range parts {
		if len(p.Data) > MaxRecordPart {
			t.Errorf("part %d (%s) is %d bytes", i+1, p.Path, len(p.Data))
		}
		if !bytes.HasSuffix(p.Data, []byte("\n")) {
			t.Errorf("part %d does not end with a line", i+1)
		}
		joined = append(joined, p.Data...)
		names = append(names, p.Path)
	}
	if parts[0].Path != Layout1.SessionRecordPath("s/1", "01JPB2N3V4W5X6Y7Z8A9B0C1D2") || parts[1].Path != "sessions/s_1/01JPB2N3V4W5X6Y7Z8A9B0C1D2-2.jsonl" {
		t.Errorf("paths %q", names)
	}
	if !bytes.Equal(joined, SessionRecord(entries)) {
		t.Error("the parts joined are not the record")
	}
	if got := RecordFiles(names); len(got) != 1 || !reflect.DeepEqual(got[0], names) {
		t.Errorf("RecordFiles(%q) = %q", names, got)
	}
}

func TestRecordFiles(t *testing.T) {
	names := []string{"B-10.jsonl", "B-2.jsonl", "A.jsonl", "B.jsonl", "C-2.jsonl", "B-3.jsonl", "B-02.jsonl",
		"B-9.jsonl", "B-4.jsonl", "B-5.jsonl", "B-6.jsonl", "B-7.jsonl", "B-8.jsonl", "notes.txt"}
	want := [][]string{
		{"A.jsonl"},
		{"B-02.jsonl"}, // not a part number as agmem writes them
		{"B.jsonl", "B-2.jsonl", "B-3.jsonl", "B-4.jsonl", "B-5.jsonl", "B-6.jsonl", "B-7.jsonl", "B-8.jsonl", "B-9.jsonl", "B-10.jsonl"},
		{"C-2.jsonl"}, // no C.jsonl: a record of its own
		{"notes.txt"},
	}
	if got := RecordFiles(names); !reflect.DeepEqual(got, want) {
		t.Errorf("RecordFiles:\n got %q\nwant %q", got, want)
	}
}

// FuzzSplitRecord: whatever the record and the limit, the pieces join to the record,
// none is over the limit, and each ends with a line unless its last line alone does
// not fit.
func FuzzSplitRecord(f *testing.F) {
	f.Add([]byte("ab\ncd\n"), 3)
	f.Add([]byte("abcdefghijkl\nx\n"), 5)
	f.Add([]byte("\n\n\n"), 1)
	f.Fuzz(func(t *testing.T, data []byte, limit int) {
		if limit < 1 || limit > 1<<16 {
			return
		}
		pieces := splitRecord(data, limit)
		var joined []byte
		for i, p := range pieces {
			if len(p) > limit {
				t.Fatalf("piece %d is %d bytes, over %d", i, len(p), limit)
			}
			last := i == len(pieces)-1
			if !last && !bytes.HasSuffix(p, []byte("\n")) && bytes.Contains(p, []byte("\n")) {
				t.Fatalf("piece %d %q cuts a line although a line ends in it", i, p)
			}
			if !last && len(p) == 0 {
				t.Fatalf("piece %d is empty", i)
			}
			joined = append(joined, p...)
		}
		if !bytes.Equal(joined, data) {
			t.Fatalf("the pieces join to %q, not %q", joined, data)
		}
	})
}
