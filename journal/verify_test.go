package journal

import (
	"slices"
	"testing"
	"time"

	"github.com/agmem/agmem/memory"
)

func TestInventoryAndRequeue(t *testing.T) {
	j := newJournal(t)
	done := mustAppend(t, j, t0, observation("s1", "Read", memory.Semantic, t0), event("s1", "SessionStart", t0))
	batches, err := j.PrepareBatches("", t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.MarkCommitted(batches[0], "c1", Signing{}); err != nil {
		t.Fatal(err)
	}
	if err := j.Finish(batches, t0); err != nil {
		t.Fatal(err)
	}
	t1 := t0.Add(time.Minute)
	marked := mustAppend(t, j, t1, observation("s1", "Bash", memory.Episodic, t1))
	if batches, err = j.PrepareBatches("c1", t1); err != nil {
		t.Fatal(err)
	}
	if err := j.MarkCommitted(batches[0], "c2", Signing{}); err != nil {
		t.Fatal(err)
	}
	t2 := t1.Add(time.Minute)
	pending := mustAppend(t, j, t2, observation("s1", "Grep", memory.Semantic, t2))

	inv, err := j.Inventory()
	if err != nil {
		t.Fatal(err)
	}
	want := []EntryState{
		{ID: done[0].ID, Session: "s1"},
		{ID: done[1].ID, Session: "s1", Event: true},
		{ID: marked[0].ID, Session: "s1", Batch: batches[0].ID},
		{ID: pending[0].ID, Session: "s1", Pending: true},
	}
	if !slices.Equal(inv.Entries, want) || len(inv.Batches) != 1 || inv.Batches[0].Commit != "c2" {
		t.Fatalf("inventory:\n got %+v %+v\nwant %+v and batch %s in c2", inv.Entries, inv.Batches, want, batches[0].ID)
	}
	checkCounts(t, j, "before requeue", "s1", counts{Observations: 3, Events: 1, Pending: 1, Commits: 2,
		PendingByType: map[memory.Type]int{memory.Semantic: 1}, LastCommit: "c2"})

	// Both commits lost: the finished entries and the marked batch are pending again,
	// the pending entry stays as it was.
	n, err := j.Requeue([]string{done[0].ID, done[1].ID, marked[0].ID, pending[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("requeued %d entries, want 3", n)
	}
	checkCounts(t, j, "after requeue", "s1", counts{Observations: 3, Events: 1, Pending: 3, PendingEvents: 1, Commits: 2,
		PendingByType: map[memory.Type]int{memory.Semantic: 2, memory.Episodic: 1}, LastCommit: "c2"})
	if batches, err = j.PrepareBatches("", t2); err != nil {
		t.Fatal(err)
	}
	if len(batches) != 1 || len(batches[0].Entries) != 4 {
		t.Fatalf("after requeue, one batch of all 4 entries was wanted, got %+v", batches)
	}

	// A batch not yet committed is the next flush's to resume, not to requeue.
	if _, err := j.Requeue([]string{pending[0].ID}); err == nil {
		t.Error("Requeue took an entry of a batch that is not committed yet")
	}
}
