package journal

import (
	"math"
	"testing"
	"time"

	"github.com/agmem/agmem/memory"
)

// Leftovers gives the batches that flushes planned and did not finish, oldest first, at
// most as many as asked for, with their entries; it plans nothing new, and a batch
// finished is no longer left over.
func TestLeftoversAreTheUnfinishedBatchesOldestFirst(t *testing.T) {
	j := newJournal(t)
	var planned []*Batch
	for i, s := range []string{"A", "B", "C"} {
		at := t0.Add(time.Duration(i) * time.Minute)
		mustAppend(t, j, at, observation(s, "Read", memory.Semantic, at))
		batches, err := j.PrepareBatches("", at)
		if err != nil || len(batches) != len(planned)+1 {
			t.Fatalf("PrepareBatches: %d batches, %v", len(batches), err)
		}
		planned = batches
	}
	mustAppend(t, j, t0.Add(time.Hour), observation("D", "Read", memory.Semantic, t0.Add(time.Hour)))

	left, err := j.Leftovers(2, math.MaxInt)
	if err != nil || len(left) != 2 || left[0].ID != planned[0].ID || left[1].ID != planned[1].ID {
		t.Fatalf("Leftovers(2) = %v, %v; want the two oldest of %v", left, err, planned)
	}
	if !left[0].Resumed || len(left[0].Entries) != 1 || left[0].Session != "A" {
		t.Errorf("the first leftover: resumed %v, entries %+v", left[0].Resumed, left[0].Entries)
	}
	if err := j.MarkCommitted(left[0], "c0ffee", Signing{}); err != nil {
		t.Fatal(err)
	}
	if err := j.Finish(left[:1], t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if left, err = j.Leftovers(10, math.MaxInt); err != nil || len(left) != 2 || left[0].ID != planned[1].ID {
		t.Errorf("after finishing the oldest, Leftovers(10) = %v, %v; want B's and C's", left, err)
	}
	if got := session(t, j, "D").Pending; got != 1 {
		t.Errorf("D has %d pending after Leftovers; it plans nothing, want 1", got)
	}
}
