package cli

import (
	"testing"
	"time"
)

// AGMEM_CONTEXT_BUDGET changes agmem context's budget; what does not read as a duration
// above zero leaves the default.
func TestContextBudget(t *testing.T) {
	for value, want := range map[string]time.Duration{
		"": 60 * time.Millisecond, "500ms": 500 * time.Millisecond, "2s": 2 * time.Second,
		"-1s": 60 * time.Millisecond, "0": 60 * time.Millisecond, "soon": 60 * time.Millisecond,
	} {
		if got := contextBudget(func(string) string { return value }); got != want {
			t.Errorf("AGMEM_CONTEXT_BUDGET=%q: %v, want %v", value, got, want)
		}
	}
}

// TestOneAtATime: a catch-up is started again only once the one before it has ended,
// or could not start.
func TestOneAtATime(t *testing.T) {
	var started []chan struct{}
	failing := false
	catchUp := oneAtATime(func() <-chan struct{} {
		if failing {
			return nil
		}
		started = append(started, make(chan struct{}))
		return started[len(started)-1]
	})
	catchUp()
	catchUp() // the first still runs
	if len(started) != 1 {
		t.Fatalf("%d started while the first runs, want 1", len(started))
	}
	close(started[0])
	failing = true
	catchUp() // could not start: nothing runs
	failing = false
	catchUp()
	if len(started) != 2 {
		t.Errorf("%d started once the first ended, want 2", len(started))
	}
}
