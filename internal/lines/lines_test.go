package lines

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// TestBound reads lines around the bound: the newline does not count, a longer line is
// read past and said to be long, whatever the buffer's size.
func TestBound(t *testing.T) {
	in := "abcd\nabcde\n\nabc\r\nabcdefgh\nxy"
	type want struct {
		n    int
		at   int64
		text string
		long bool
		end  bool
	}
	wants := []want{{1, 0, "abcd\n", false, true}, {2, 5, "", true, true}, {3, 11, "\n", false, true},
		{4, 12, "abc\r\n", false, true}, {5, 17, "", true, true}, {6, 26, "xy", false, false}}
	for _, size := range []int{16, 4096} {
		r := NewReader(strings.NewReader(in), 4, size, 0)
		for i, w := range wants {
			l, err := r.Next()
			if i == len(wants)-1 {
				if !errors.Is(err, io.EOF) {
					t.Errorf("size %d: last line: err %v, want io.EOF", size, err)
				}
			} else if err != nil {
				t.Fatalf("size %d: line %d: %v", size, i+1, err)
			}
			got := want{l.N, l.At, string(l.Text), l.Long, l.Ended}
			if got != w {
				t.Errorf("size %d: line %d = %+v, want %+v", size, i+1, got, w)
			}
		}
		if l, err := r.Next(); l.N != 0 || !errors.Is(err, io.EOF) {
			t.Errorf("size %d: after the end: %+v, %v", size, l, err)
		}
		if r.Offset() != int64(len(in)) {
			t.Errorf("size %d: offset %d, want %d", size, r.Offset(), len(in))
		}
	}
}
