package recall

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"
)

// fill passes on a stream cut short (an inflater's io.ErrUnexpectedEOF) as an error, not
// as the end of the part, and the end as io.EOF.
func TestFillCutShortIsAnError(t *testing.T) {
	cut := io.MultiReader(bytes.NewReader([]byte("line one\nline t")), iotest.ErrReader(io.ErrUnexpectedEOF))
	n, err := fill(cut, make([]byte, 64))
	if n != 15 || err != io.ErrUnexpectedEOF {
		t.Errorf("fill of a cut stream = %d, %v; want 15, io.ErrUnexpectedEOF", n, err)
	}
	n, err = fill(iotest.OneByteReader(bytes.NewReader([]byte("whole\n"))), make([]byte, 64))
	if n != 6 || err != io.EOF {
		t.Errorf("fill of a whole stream = %d, %v; want 6, io.EOF", n, err)
	}
	if n, err := fill(bytes.NewReader(make([]byte, 100)), make([]byte, 64)); n != 64 || err != nil {
		t.Errorf("fill of a long stream = %d, %v; want 64, nil", n, err)
	}
}
