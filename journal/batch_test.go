package journal

import (
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/agmem/agmem/memory"
)

// counts is the part of SessionInfo that a flush moves.
type counts struct {
	Observations, Events, Pending, PendingEvents, Commits int
	PendingByType                                         map[memory.Type]int
	LastCommit                                            string
}

func countsOf(s SessionInfo) counts {
	c := counts{s.Observations, s.Events, s.Pending, s.PendingEvents, s.Commits, s.PendingByType, s.LastCommit}
	if len(c.PendingByType) == 0 {
		c.PendingByType = nil
	}
	return c
}

func checkCounts(t *testing.T, j *Journal, when, id string, want counts) {
	t.Helper()
	if got := countsOf(session(t, j, id)); !reflect.DeepEqual(got, want) {
		t.Errorf("%s: session %s counts\n got %+v\nwant %+v", when, id, got, want)
	}
}

func bySession(batches []*Batch) map[string]*Batch {
	m := map[string]*Batch{}
	for _, b := range batches {
		m[b.Session] = b
	}
	return m
}

func TestSessionCountersThroughAFlush(t *testing.T) {
	j := newJournal(t)
	a := []memory.Entry{
		event("A", "SessionStart", t0),
		observation("A", "Read", memory.Semantic, t0.Add(1*time.Second)),
		observation("A", "Grep", memory.Semantic, t0.Add(2*time.Second)),
		observation("A", "Bash", memory.Episodic, t0.Add(3*time.Second)),
		event("A", "Stop", t0.Add(4*time.Second)),
	}
	mustAppend(t, j, t0, a...)
	mustAppend(t, j, t0, observation("B", "TodoWrite", memory.Procedural, t0.Add(time.Minute)))

	pendingA := counts{Observations: 3, Events: 2, Pending: 3, PendingEvents: 2,
		PendingByType: map[memory.Type]int{memory.Semantic: 2, memory.Episodic: 1}}
	pendingB := counts{Observations: 1, Pending: 1, PendingByType: map[memory.Type]int{memory.Procedural: 1}}
	checkCounts(t, j, "after Append", "A", pendingA)
	checkCounts(t, j, "after Append", "B", pendingB)

	infoA := session(t, j, "A")
	if !infoA.First.Equal(t0) || !infoA.Last.Equal(t0.Add(4*time.Second)) || infoA.Source != "test" {
		t.Errorf("session A: first %s, last %s, source %q", infoA.First, infoA.Last, infoA.Source)
	}
	all := sessions(t, j)
	if len(all) != 2 || all[0].ID != "A" || all[1].ID != "B" {
		t.Errorf("Sessions = %+v, want A then B (most recent activity last)", all)
	}

	batches, err := j.PrepareBatches("base0", t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	// Planned is not committed: the entries still count as pending.
	checkCounts(t, j, "after PrepareBatches", "A", pendingA)
	checkCounts(t, j, "after PrepareBatches", "B", pendingB)

	bA := bySession(batches)["A"]
	if err := j.MarkCommitted(bA, "c-A", Signing{}); err != nil {
		t.Fatal(err)
	}
	if bA.Commit != "c-A" {
		t.Errorf("MarkCommitted left batch.Commit = %q", bA.Commit)
	}
	committedA := counts{Observations: 3, Events: 2, Commits: 1, LastCommit: "c-A"}
	checkCounts(t, j, "after MarkCommitted", "A", committedA)
	checkCounts(t, j, "after MarkCommitted of A", "B", pendingB)

	bB := bySession(batches)["B"]
	if err := j.MarkCommitted(bB, "c-B", Signing{}); err != nil {
		t.Fatal(err)
	}
	if err := j.Finish(batches, t0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, j, "after Finish", "A", committedA)
	checkCounts(t, j, "after Finish", "B", counts{Observations: 1, Commits: 1, LastCommit: "c-B"})

	// A second round adds to the totals and starts pending again.
	mustAppend(t, j, t0, observation("A", "WebFetch", memory.Semantic, t0.Add(5*time.Second)))
	checkCounts(t, j, "after a second Append", "A", counts{Observations: 4, Events: 2, Pending: 1,
		Commits: 1, LastCommit: "c-A", PendingByType: map[memory.Type]int{memory.Semantic: 1}})
	batches, err = j.PrepareBatches("c-B", t0.Add(3*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(batches) != 1 || batches[0].Session != "A" || len(batches[0].Seqs) != 1 {
		t.Fatalf("second PrepareBatches = %+v, want one batch for A with the new entry", batches)
	}
	if err := j.MarkCommitted(batches[0], "c-A2", Signing{}); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, j, "after the second commit", "A", counts{Observations: 4, Events: 2, Commits: 2, LastCommit: "c-A2"})
}

func TestPrepareBatches(t *testing.T) {
	j := newJournal(t)
	planned := t0.Add(time.Hour)
	if b, err := j.PrepareBatches("base0", planned); err != nil || len(b) != 0 {
		t.Fatalf("PrepareBatches on an empty journal = %+v, %v; want none", b, err)
	}

	// Appended out of order, and with another session in between.
	a2 := observation("A", "Bash", memory.Episodic, t0.Add(2*time.Second))
	b1 := observation("B", "Read", memory.Semantic, t0.Add(time.Second))
	a1 := event("A", "SessionStart", t0)
	a3 := observation("A", "Read", memory.Semantic, t0.Add(3*time.Second))
	mustAppend(t, j, t0, a2, b1)
	mustAppend(t, j, t0, a1, a3)
	// a2 and a3 as a journal holds them that was written before the pending set said
	// each entry's kind and memory type: counted alike, from the entries.
	writeRaw(t, j, func(tx *bolt.Tx) error {
		for _, seq := range []uint64{1, 4} {
			if err := tx.Bucket(bucketPending).Put(sessionKey("A", seqKey(seq)), nil); err != nil {
				return err
			}
		}
		return nil
	})

	first, err := j.PrepareBatches("base0", planned)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 2 {
		t.Fatalf("PrepareBatches = %d batches, want one per session (2)", len(first))
	}
	m := bySession(first)
	want := []struct {
		session string
		entries []memory.Entry
		obs     int
		events  int
		byType  map[memory.Type]int
	}{
		{"A", []memory.Entry{a1, a2, a3}, 2, 1, map[memory.Type]int{memory.Episodic: 1, memory.Semantic: 1}},
		{"B", []memory.Entry{b1}, 1, 0, map[memory.Type]int{memory.Semantic: 1}},
	}
	for _, w := range want {
		b := m[w.session]
		if b == nil {
			t.Fatalf("no batch for session %s", w.session)
		}
		if b.Resumed || b.Commit != "" || b.Base != "base0" || !b.Created.Equal(planned) {
			t.Errorf("batch %s: resumed %v, commit %q, base %q, created %s", w.session, b.Resumed, b.Commit, b.Base, b.Created)
		}
		if id, err := memory.NormalizeID(b.ID); err != nil || id != b.ID {
			t.Errorf("batch id %q is not a canonical id", b.ID)
		}
		if got := ids(b.Entries); !reflect.DeepEqual(got, ids(w.entries)) {
			t.Errorf("batch %s entries %q, want time order %q", w.session, got, ids(w.entries))
		}
		if len(b.Seqs) != len(w.entries) || b.Observations != w.obs || b.Events != w.events || !reflect.DeepEqual(b.ByType, w.byType) {
			t.Errorf("batch %s: %d seqs, %d observations, %d events, by type %v; want %d, %d, %d, %v",
				w.session, len(b.Seqs), b.Observations, b.Events, b.ByType, len(w.entries), w.obs, w.events, w.byType)
		}
	}
	if first[0].ID == first[1].ID {
		t.Errorf("two batches share id %s", first[0].ID)
	}

	// A flush killed after the intent: the next one finds the same batches, resumed, and
	// makes no new ones, because their entries left the pending set with the intent.
	second, err := j.PrepareBatches("base1", planned.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(second) != len(first) {
		t.Fatalf("second PrepareBatches = %d batches, want the %d unfinished ones", len(second), len(first))
	}
	for i, b := range second {
		old := first[i]
		if !b.Resumed || b.ID != old.ID || b.Session != old.Session || b.Base != "base0" ||
			!reflect.DeepEqual(b.Seqs, old.Seqs) || !reflect.DeepEqual(ids(b.Entries), ids(old.Entries)) {
			t.Errorf("resumed batch %d = %+v\nwant the first one, resumed, planned on base0: %+v", i, b, old)
		}
	}

	// New entries after the intent go in a new batch, after the unfinished ones.
	a4 := observation("A", "Grep", memory.Semantic, t0.Add(time.Millisecond)) // earlier than a batched one
	mustAppend(t, j, t0, a4)
	third, err := j.PrepareBatches("base2", planned.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(third) != 3 {
		t.Fatalf("third PrepareBatches = %d batches, want 2 resumed and 1 new", len(third))
	}
	for i := range 2 {
		if !third[i].Resumed || third[i].ID != first[i].ID {
			t.Errorf("batch %d: want resumed %s first, got %+v", i, first[i].ID, third[i])
		}
	}
	fresh := third[2]
	if fresh.Resumed || fresh.Session != "A" || fresh.Base != "base2" || !reflect.DeepEqual(ids(fresh.Entries), []string{a4.ID()}) {
		t.Errorf("new batch = %+v, want only %s, planned on base2", fresh, a4.ID())
	}

	// Every entry is in exactly one batch.
	var all []string
	for _, b := range third {
		all = append(all, ids(b.Entries)...)
	}
	sort.Strings(all)
	wantAll := ids([]memory.Entry{a1, a2, a3, a4, b1})
	sort.Strings(wantAll)
	if !reflect.DeepEqual(all, wantAll) {
		t.Errorf("batches hold %q, want each entry once: %q", all, wantAll)
	}
}

func TestMarkCommittedIsIdempotent(t *testing.T) {
	j := newJournal(t)
	mustAppend(t, j, t0,
		observation("A", "Read", memory.Semantic, t0),
		observation("A", "Bash", memory.Episodic, t0.Add(time.Second)))
	batches, err := j.PrepareBatches("", t0)
	if err != nil {
		t.Fatal(err)
	}
	b := batches[0]
	want := counts{Observations: 2, Commits: 1, LastCommit: "c1"}
	for range 3 {
		if err := j.MarkCommitted(b, "c1", Signing{}); err != nil {
			t.Fatal(err)
		}
		checkCounts(t, j, "after MarkCommitted", "A", want)
	}
	// A flush that resumes the batch finds it marked, and marking it again (with whatever
	// commit it found) changes nothing.
	resumed, err := j.PrepareBatches("", t0)
	if err != nil {
		t.Fatal(err)
	}
	if len(resumed) != 1 || !resumed[0].Resumed || resumed[0].Commit != "c1" {
		t.Fatalf("PrepareBatches after MarkCommitted = %+v, want the batch resumed with commit c1", resumed)
	}
	if err := j.MarkCommitted(resumed[0], "c2", Signing{}); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, j, "after marking again", "A", want)
	if resumed[0].Commit != "c1" {
		t.Errorf("marking again changed the batch's commit to %q", resumed[0].Commit)
	}

	if err := j.MarkCommitted(&Batch{ID: "01JGKX2A3B4C5D6E7F8G9H0JKM", Session: "A"}, "c3", Signing{}); err == nil {
		t.Errorf("MarkCommitted of a batch the journal does not hold succeeded")
	}
	checkCounts(t, j, "after marking an unknown batch", "A", want)
}

func TestFinish(t *testing.T) {
	j := newJournal(t)
	if f, err := j.LastFlush(); err != nil || f != nil {
		t.Fatalf("LastFlush of a new journal = %+v, %v; want none", f, err)
	}
	mustAppend(t, j, t0, observation("A", "Read", memory.Semantic, t0), observation("B", "Read", memory.Semantic, t0))
	batches, err := j.PrepareBatches("", t0)
	if err != nil {
		t.Fatal(err)
	}
	m := bySession(batches)
	if err := j.MarkCommitted(m["A"], "cA", Signing{}); err != nil {
		t.Fatal(err)
	}

	// B is not committed: Finish refuses, and forgets nothing, not even A.
	err = j.Finish(batches, t0.Add(time.Minute))
	if err == nil || !strings.Contains(err.Error(), m["B"].ID) {
		t.Fatalf("Finish with an uncommitted batch = %v, want an error naming %s", err, m["B"].ID)
	}
	if f, err := j.LastFlush(); err != nil || f != nil {
		t.Errorf("a refused Finish recorded a flush: %+v, %v", f, err)
	}
	left, err := j.PrepareBatches("", t0)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 2 {
		t.Fatalf("after a refused Finish %d batches are left, want both", len(left))
	}

	if err := j.MarkCommitted(m["B"], "cB", Signing{}); err != nil {
		t.Fatal(err)
	}
	at := t0.Add(2 * time.Minute)
	if err := j.Finish(batches, at); err != nil {
		t.Fatal(err)
	}
	f, err := j.LastFlush()
	if err != nil {
		t.Fatal(err)
	}
	if f == nil || !f.At.Equal(at) || !reflect.DeepEqual(f.Commits, []string{m[batches[0].Session].Commit, m[batches[1].Session].Commit}) {
		t.Errorf("LastFlush = %+v, want at %s with commits of both batches", f, at)
	}
	if left, err := j.PrepareBatches("", t0); err != nil || len(left) != 0 {
		t.Errorf("after Finish PrepareBatches = %+v, %v; want nothing left", left, err)
	}
	// The committed entries stay readable.
	if got := timeline(t, j, "A"); len(got) != 1 {
		t.Errorf("after Finish session A holds %d entries, want 1", len(got))
	}
}

func TestPlanBatchesBoundsABatch(t *testing.T) {
	j := newJournal(t)
	var want []string
	for i := range 7 {
		e := observation("A", "Bash", memory.Episodic, t0.Add(time.Duration(i)*time.Second))
		mustAppend(t, j, t0, e)
		want = append(want, e.ID())
	}
	mustAppend(t, j, t0, observation("B", "Read", memory.Semantic, t0))

	planned, err := j.PlanBatches("base0", t0.Add(time.Hour), 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(planned) != 4 || !slices.IsSorted(planned) {
		t.Fatalf("PlanBatches(max 3) = %q; want 4 batches (A: 3, 3, 1; B: 1), oldest first", planned)
	}
	// Loaded a bounded part at a time: 3 + 3 entries fit in 6; the next does not.
	left, err := j.Leftovers(10, 6)
	if err != nil || len(left) != 2 {
		t.Fatalf("Leftovers(10, 6) = %d batches, %v; want 2", len(left), err)
	}
	if one, err := j.Leftovers(10, 1); err != nil || len(one) != 1 || len(one[0].Entries) != 3 {
		t.Fatalf("Leftovers(10, 1) = %v, %v; want the first batch, whole, though it holds more", one, err)
	}
	all, err := j.Leftovers(10, 100)
	if err != nil {
		t.Fatal(err)
	}
	var gotA []string
	for _, b := range all {
		if b.Session == "A" {
			if b.Observations != len(b.Entries) || len(b.Entries) > 3 {
				t.Errorf("batch %s of A holds %d entries (counted %d), want at most 3", b.ID, len(b.Entries), b.Observations)
			}
			gotA = append(gotA, ids(b.Entries)...)
		}
	}
	if !reflect.DeepEqual(gotA, want) {
		t.Errorf("A's batches hold %q, want each entry once, in order: %q", gotA, want)
	}
}
