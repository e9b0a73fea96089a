package recall

import (
	"sync/atomic"
	"testing"
)

// TestOnCPUs: every index is called once, and a call's panic comes back to the caller,
// whose command recovers from it (exit 1), never ending the process from a goroutine of
// its own (exit 2, which an agent reads as "block").
func TestOnCPUs(t *testing.T) {
	var calls [100]atomic.Int32
	onCPUs(len(calls), func(i int) { calls[i].Add(1) })
	for i := range calls {
		if n := calls[i].Load(); n != 1 {
			t.Fatalf("index %d called %d times", i, n)
		}
	}
	defer func() {
		if p := recover(); p != "a damaged record" {
			t.Errorf("recovered %v, want the call's panic", p)
		}
	}()
	onCPUs(10, func(i int) {
		if i == 7 {
			panic("a damaged record")
		}
	})
	t.Error("a call's panic was not raised again")
}
