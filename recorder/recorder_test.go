package recorder

import (
	"strings"
	"testing"
)

// A line whose decoding panics is a bad line, not a crash of the goroutine decoding
// it, which would exit 2.
func TestPanicIsABadLine(t *testing.T) {
	res := safely(func() lineResult { panic("a bug") })
	if res.err == nil || !strings.Contains(res.err.Error(), "internal error: a bug") {
		t.Fatalf("safely = %+v, want an internal error", res)
	}
}
