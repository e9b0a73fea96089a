package mcp

import (
	"fmt"
	"testing"
)

func TestRecorderCoalescesWhileABatchIsWritten(t *testing.T) {
	writing := make(chan struct{})
	release := make(chan struct{})
	var batches [][]Call
	rec := startRecorder(func(calls []Call) error {
		if len(batches) == 0 {
			close(writing)
			<-release
		}
		batches = append(batches, calls)
		return nil
	}, func(err error) { t.Errorf("told of %v", err) })
	rec.calls.put(Call{Tool: "call 1"})
	<-writing
	for i := 2; i <= 20; i++ {
		rec.calls.put(Call{Tool: fmt.Sprintf("call %d", i)})
	}
	close(release)
	rec.close()
	if len(batches) != 2 || len(batches[0]) != 1 || len(batches[1]) != 19 {
		t.Fatalf("batches of %v calls, want 1 then the 19 that finished while it was written", sizes(batches))
	}
	for i, c := range append(batches[0], batches[1]...) {
		if want := fmt.Sprintf("call %d", i+1); c.Tool != want {
			t.Errorf("call %d recorded as %q", i+1, c.Tool)
		}
	}
}

func sizes(batches [][]Call) []int {
	n := make([]int, len(batches))
	for i, b := range batches {
		n[i] = len(b)
	}
	return n
}
