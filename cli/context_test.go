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
