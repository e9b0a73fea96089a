package journal

import (
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/agmem/agmem/memory"
)

// TestLedgerKeepsEveryCommitInOrder: each batch marked committed is in the ledger once,
// in order, with its signing, and stays there after the batches are finished and the
// sessions forgotten by gc.
func TestLedgerKeepsEveryCommitInOrder(t *testing.T) {
	j := newJournal(t)
	mustAppend(t, j, t0, observation("s1", "Read", memory.Semantic, t0), observation("s2", "Bash", memory.Episodic, t0),
		event("s2", "Stop", t0))
	batches, err := j.PrepareBatches("", t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.MarkCommitted(batches[0], "c1", Signing{Signed: true}); err != nil {
		t.Fatal(err)
	}
	if err := j.MarkCommitted(batches[1], "c2", Signing{Failed: "no key"}); err != nil {
		t.Fatal(err)
	}
	if err := j.MarkCommitted(batches[1], "c2", Signing{}); err != nil { // marked again: kept once
		t.Fatal(err)
	}
	if err := j.Finish(batches, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Forget(t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	ledger, err := j.Ledger()
	if err != nil {
		t.Fatal(err)
	}
	if len(ledger) != 2 {
		t.Fatalf("ledger: %+v, want 2 commits", ledger)
	}
	for i, want := range []Committed{
		{Commit: "c1", Batch: batches[0].ID, Session: batches[0].Session, Observations: 1, Signing: Signing{Signed: true}},
		{Commit: "c2", Batch: batches[1].ID, Session: batches[1].Session, Observations: 1, Events: 1, Signing: Signing{Failed: "no key"}},
	} {
		got := ledger[i]
		got.At = time.Time{}
		if got != want {
			t.Errorf("ledger[%d] = %+v, want %+v", i, got, want)
		}
	}
	last, err := j.LastCommitted()
	if err != nil || last == nil || last.Commit != "c2" {
		t.Errorf("last committed: %+v, %v", last, err)
	}
}

// TestJournalWithoutALedgerReads: a journal an older agmem wrote has no ledger; it
// checks clean, reads as an empty ledger, and gains one.
func TestJournalWithoutALedgerReads(t *testing.T) {
	j := newJournal(t)
	mustAppend(t, j, t0, observation("s1", "Read", memory.Semantic, t0))
	db, err := bolt.Open(j.Path(), 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket(bucketLedger) }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if findings, err := j.Check(); err != nil || len(findings) > 0 {
		t.Errorf("check: %v, %v", findings, err)
	}
	if ledger, err := j.Ledger(); err != nil || len(ledger) != 0 {
		t.Errorf("ledger: %+v, %v", ledger, err)
	}
	if last, err := j.LastCommitted(); err != nil || last != nil {
		t.Errorf("last committed: %+v, %v", last, err)
	}
}
