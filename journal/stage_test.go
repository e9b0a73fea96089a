package journal

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/agmem/agmem/memory"
)

func prepared(t *testing.T, entries ...memory.Entry) []Prepared {
	t.Helper()
	out := make([]Prepared, len(entries))
	for i, e := range entries {
		p, err := Prepare(e)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = p
	}
	return out
}

func startStaging(t *testing.T, j *Journal) *Staging {
	t.Helper()
	s, err := j.StartStaging(t0, 30*time.Minute)
	if err != nil {
		t.Fatalf("StartStaging: %v", err)
	}
	return s
}

// stored counts what the entries bucket holds, indexed or not, and the stagings the
// meta bucket names.
func stored(t *testing.T, j *Journal) (entries, stagings int) {
	t.Helper()
	err := j.view(func(tx *bolt.Tx) error {
		entries = tx.Bucket(bucketEntries).Stats().KeyN
		return eachStaging(tx, func([]byte, []seqRange) error { stagings++; return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	return entries, stagings
}

// mustStore checks what stored counts.
func mustStore(t *testing.T, j *Journal, entries, stagings int) {
	t.Helper()
	if n, s := stored(t, j); n != entries || s != stagings {
		t.Fatalf("stored %d entries, %d stagings; want %d and %d", n, s, entries, stagings)
	}
}

func stage(t *testing.T, s *Staging, ps []Prepared) []Appended {
	t.Helper()
	out, err := s.Stage(ps)
	if err != nil {
		t.Fatalf("Stage: %v", err)
	}
	return out
}

func mustCheck(t *testing.T, j *Journal) {
	t.Helper()
	findings, err := j.Check()
	if err != nil || len(findings) > 0 {
		t.Fatalf("Check = %q, %v", findings, err)
	}
}

func TestStagedEntriesAreSeenOnlyOnceCommitted(t *testing.T) {
	j := newJournal(t)
	s := startStaging(t, j)
	defer s.Close()
	// The last one names no session: Stage places it in the open session (a new one
	// here), as Append would, and stores it with the others.
	loose := observation("", "Read", memory.Semantic, t0.Add(3))
	ps := prepared(t, observation("s", "Read", memory.Semantic, t0), call("s", "toolu_1", t0.Add(1)),
		event("s", "UserPromptSubmit", t0.Add(2)), loose)
	stage(t, s, ps[:2])
	stage(t, s, ps[2:])
	mustStore(t, j, 4, 1)
	if b, err := j.Backlog(); err != nil || b.Observations+b.Events != 0 {
		t.Fatalf("Backlog while staged = %+v, %v", b, err)
	}
	if got := sessions(t, j); len(got) != 0 {
		t.Fatalf("Sessions while staged = %+v", got)
	}
	if inv, err := j.Inventory(); err != nil || len(inv.Entries) != 0 {
		t.Fatalf("Inventory while staged = %+v, %v", inv, err)
	}
	mustCheck(t, j)

	if changed, err := s.Commit(); err != nil || len(changed) > 0 {
		t.Fatalf("Commit = %v, %v", changed, err)
	}
	if got := timeline(t, j, "s"); len(got) != 3 || got[1].Observation.ToolUseID != "toolu_1" {
		t.Fatalf("timeline of s = %v", ids(got))
	}
	if loose.Session() == "" || len(timeline(t, j, loose.Session())) != 1 {
		t.Fatalf("the entry without a session joined none: %q", loose.Session())
	}
	// The session it opened stays open for the next entry that names none.
	next := observation("", "Grep", memory.Semantic, t0.Add(5))
	if _, err := j.Append(Entries([]memory.Entry{next}), AppendOptions{IdleGap: gap, Now: t0.Add(5)}); err != nil {
		t.Fatal(err)
	}
	if next.Session() != loose.Session() {
		t.Errorf("the next entry without a session joined %q, not the open %q", next.Session(), loose.Session())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	mustStore(t, j, 5, 0)
	mustCheck(t, j)
	// Recorded once: the same call again is a duplicate, whether staged or not.
	again := prepared(t, call("s", "toolu_1", t0.Add(5)))
	s2 := startStaging(t, j)
	defer s2.Close()
	if out := stage(t, s2, again); !out[0].Duplicate || out[0].ID != ps[1].head.id {
		t.Fatalf("Stage of a call recorded before = %+v", out)
	}
	if _, err := s2.Commit(); err != nil {
		t.Fatal(err)
	}
	mustStore(t, j, 5, 0)
	mustCheck(t, j)
}

func TestStagingClosedWithoutAppendLeavesNothing(t *testing.T) {
	j := newJournal(t)
	s := startStaging(t, j)
	stage(t, s, prepared(t, observation("s", "Read", memory.Semantic, t0)))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	mustStore(t, j, 0, 0)
	mustCheck(t, j)
}

// A process killed while staging leaves its parts and its record behind, and its lock
// free: the next staging drops them, as Compact does, and a live staging is left alone.
func TestStagingsOfDeadProcessesAreDropped(t *testing.T) {
	for _, dropper := range []string{"StartStaging", "Compact"} {
		t.Run(dropper, func(t *testing.T) {
			j := newJournal(t)
			live := startStaging(t, j)
			defer live.Close()
			stage(t, live, prepared(t, observation("s", "Read", memory.Semantic, t0)))
			dead := startStaging(t, j)
			stage(t, dead, prepared(t, observation("s", "Grep", memory.Semantic, t0), observation("s", "Glob", memory.Semantic, t0)))
			dead.lock.Release() // as its process's death would
			mustCheck(t, j)     // passed by, not damage
			mustStore(t, j, 3, 2)
			switch dropper {
			case "StartStaging":
				startStaging(t, j).Close()
			case "Compact":
				if _, _, err := j.Compact(); err != nil {
					t.Fatal(err)
				}
			}
			mustStore(t, j, 1, 1)
			mustCheck(t, j)
		})
	}
}

// A staging whose lock file was removed is taken for dead, and dropped, by the next
// one: what it then stages or appends is refused, and nothing is indexed that is gone.
func TestDroppedStagingRecordsNothing(t *testing.T) {
	j := newJournal(t)
	s := startStaging(t, j)
	defer s.Close()
	ps := prepared(t, observation("s", "Read", memory.Semantic, t0), observation("s", "Grep", memory.Semantic, t0))
	stage(t, s, ps[:1])
	if err := os.Remove(stagingLock(j, s.id)); err != nil {
		t.Fatal(err)
	}
	startStaging(t, j).Close()
	if _, err := s.Stage(ps[1:]); !errors.Is(err, ErrStagingDropped) {
		t.Fatalf("Stage after the staging was dropped: %v, want ErrStagingDropped", err)
	}
	if _, err := s.Commit(); err == nil {
		t.Fatalf("Commit after the staging was dropped: no error")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	mustStore(t, j, 0, 0)
	mustCheck(t, j)
}

// A process killed before it staged anything leaves a lock file and no record: the
// next staging removes the file, and leaves a live staging's alone.
func TestLockFilesOfDeadStagingsAreRemoved(t *testing.T) {
	j := newJournal(t)
	live := startStaging(t, j)
	defer live.Close()
	dead := startStaging(t, j)
	dead.lock.Release() // as its process's death would
	startStaging(t, j).Close()
	files, err := filepath.Glob(stagingLock(j, "*"))
	if err != nil || len(files) != 1 || files[0] != stagingLock(j, live.id) {
		t.Fatalf("lock files left: %q, %v; want the live staging's alone", files, err)
	}
}

// An entry recorded by another process while a staging holds it unseen (the same id,
// or the same call under another id) is kept once, where the other process put it:
// Commit drops the staging's copy and says what was kept.
func TestRecordedElsewhereWhileStagedIsKeptOnce(t *testing.T) {
	j := newJournal(t)
	s := startStaging(t, j)
	defer s.Close()
	same := observation("s", "Read", memory.Semantic, t0)
	staged := call("s", "toolu_9", t0.Add(1))
	other := observation("s", "Grep", memory.Semantic, t0.Add(2))
	stage(t, s, prepared(t, same, staged))
	stage(t, s, prepared(t, other))

	hookCall := call("s", "toolu_9", t0.Add(1)) // the same call, under an id of its own
	if out := mustAppend(t, j, t0.Add(3), same, hookCall); out[0].Duplicate || out[1].Duplicate {
		t.Fatalf("the hook's append of what is only staged = %+v, want both recorded", out)
	}
	changed, err := s.Commit()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Appended{same.ID(): {ID: same.ID(), Duplicate: true}, staged.ID(): {ID: hookCall.ID(), Duplicate: true}}
	if len(changed) != len(want) || changed[same.ID()] != want[same.ID()] || changed[staged.ID()] != want[staged.ID()] {
		t.Fatalf("Commit = %+v, want %+v", changed, want)
	}
	got := ids(timeline(t, j, "s"))
	if !slices.Equal(got, []string{same.ID(), hookCall.ID(), other.ID()}) {
		t.Fatalf("timeline of s = %v, want each once", got)
	}
	if info := session(t, j, "s"); info.Observations != 3 || info.Pending != 3 {
		t.Errorf("session counts %d observations, %d pending; want 3, 3", info.Observations, info.Pending)
	}
	mustStore(t, j, 3, 0)
	mustCheck(t, j)
}

// Two stagings hold the same entry: the first to commit keeps it, the other drops its
// copy.
func TestTwoStagingsOfOneEntry(t *testing.T) {
	j := newJournal(t)
	e := observation("s", "Read", memory.Semantic, t0)
	a, b := startStaging(t, j), startStaging(t, j)
	defer a.Close()
	defer b.Close()
	stage(t, a, prepared(t, e))
	stage(t, b, prepared(t, e, observation("s", "Grep", memory.Semantic, t0.Add(1))))
	if changed, err := b.Commit(); err != nil || len(changed) != 0 {
		t.Fatalf("the first Commit = %v, %v", changed, err)
	}
	if changed, err := a.Commit(); err != nil || changed[e.ID()] != (Appended{ID: e.ID(), Duplicate: true}) {
		t.Fatalf("the second Commit = %v, %v; want %s a duplicate", changed, err, e.ID())
	}
	if got := timeline(t, j, "s"); len(got) != 2 {
		t.Fatalf("timeline of s = %v, want 2 entries", ids(got))
	}
	mustStore(t, j, 2, 0)
	mustCheck(t, j)
}

// A staged result of a call every reader sees reported leaves the report as it is until
// Commit answers it; a report and its result in two parts of one staging are one call.
// mustBeAnswered checks that session s holds report alone, answered with "the result",
// counted once and pending, and that the journal holds nothing else.
func mustBeAnswered(t *testing.T, j *Journal, report memory.Entry) {
	t.Helper()
	got := timeline(t, j, "s")
	if len(got) != 1 || got[0].ID() != report.ID() || got[0].Observation.NoResult || string(got[0].Observation.Result) != `"the result"` {
		t.Fatalf("after Commit the timeline holds %+v; want the call answered", got)
	}
	if info := session(t, j, "s"); info.Observations != 1 || info.Pending != 1 {
		t.Errorf("session counts %d observations, %d pending; want 1, 1", info.Observations, info.Pending)
	}
	mustStore(t, j, 1, 0)
	mustCheck(t, j)
}

func TestStagedAnswers(t *testing.T) {
	t.Run("to a visible report", func(t *testing.T) {
		j := newJournal(t)
		report := reported("s", "call_1", t0)
		mustAppend(t, j, t0, report)
		s := startStaging(t, j)
		defer s.Close()
		out := stage(t, s, prepared(t, answerOf(report, t0.Add(1500*time.Millisecond))))
		if out[0] != (Appended{ID: report.ID()}) {
			t.Fatalf("Stage of the answer = %+v, want the report answered", out)
		}
		if got := timeline(t, j, "s"); len(got) != 1 || !got[0].Observation.NoResult {
			t.Fatalf("before Commit the timeline holds %v; want the report as it was", ids(got))
		}
		if changed, err := s.Commit(); err != nil || changed[report.ID()] != (Appended{ID: report.ID()}) {
			t.Fatalf("Commit = %v, %v", changed, err)
		}
		mustBeAnswered(t, j, report)
	})
	t.Run("to a report committed meanwhile", func(t *testing.T) {
		j := newJournal(t)
		report := reported("s", "call_1", t0)
		mustAppend(t, j, t0, report)
		s := startStaging(t, j)
		defer s.Close()
		stage(t, s, prepared(t, answerOf(report, t0.Add(time.Second))))
		if _, err := j.PlanBatches("base", t0.Add(2*time.Hour), 0); err != nil { // an hour on: not held back
			t.Fatal(err)
		}
		if changed, err := s.Commit(); err != nil || changed[report.ID()] != (Appended{ID: report.ID(), Duplicate: true}) {
			t.Fatalf("Commit = %v, %v; want the answer a duplicate of the call committed", changed, err)
		}
		mustStore(t, j, 1, 0)
		mustCheck(t, j)
	})
	t.Run("to a report recorded meanwhile", func(t *testing.T) {
		j := newJournal(t)
		report := reported("s", "call_1", t0)
		s := startStaging(t, j)
		defer s.Close()
		stage(t, s, prepared(t, answerOf(report, t0.Add(1500*time.Millisecond))))
		mustAppend(t, j, t0, report) // a hook's report of the call, after its result was staged
		if changed, err := s.Commit(); err != nil || changed[report.ID()] != (Appended{ID: report.ID()}) {
			t.Fatalf("Commit = %v, %v; want the report answered", changed, err)
		}
		mustBeAnswered(t, j, report)
	})
	t.Run("in two parts", func(t *testing.T) {
		j := newJournal(t)
		s := startStaging(t, j)
		defer s.Close()
		report := reported("s", "call_1", t0)
		stage(t, s, prepared(t, report))
		if out := stage(t, s, prepared(t, answerOf(report, t0.Add(1500*time.Millisecond)))); out[0] != (Appended{ID: report.ID()}) {
			t.Fatalf("Stage of the answer = %+v", out)
		}
		if _, err := s.Commit(); err != nil {
			t.Fatal(err)
		}
		if got := timeline(t, j, "s"); len(got) != 1 || got[0].Observation.NoResult {
			t.Fatalf("timeline = %+v, want the call answered once", got)
		}
		mustStore(t, j, 1, 0)
		mustCheck(t, j)
	})
}

// What a staging committed is in the parts until merged: every reader sees it there,
// a flush takes it, and the next staging merges what a killed process left.
func TestCommittedPartsAreReadBeforeTheyAreMerged(t *testing.T) {
	j := newJournal(t)
	before := observation("s", "Glob", memory.Semantic, t0)
	mustAppend(t, j, t0, before)
	s := startStaging(t, j)
	defer s.Close()
	staged := []memory.Entry{call("s", "toolu_1", t0.Add(1)), observation("s", "Read", memory.Semantic, t0.Add(2))}
	stage(t, s, prepared(t, staged...))
	read, err := j.Since(0, func(memory.Entry) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit(); err != nil { // not closed: as a process killed before the merge leaves it
		t.Fatal(err)
	}
	err = j.view(func(tx *bolt.Tx) error {
		if !hasParts(tx) {
			t.Error("no part after commit")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	mustCheck(t, j)
	if got := ids(timeline(t, j, "s")); !slices.Equal(got, []string{before.ID(), staged[0].ID(), staged[1].ID()}) {
		t.Fatalf("timeline = %v", got)
	}
	var found []string
	if err := j.Entries([]string{staged[1].ID()}, func(e memory.Entry) error { found = append(found, e.ID()); return nil }); err != nil || len(found) != 1 {
		t.Fatalf("Entries of a staged id = %v, %v", found, err)
	}
	if b, err := j.Backlog(); err != nil || b.Observations != 3 {
		t.Fatalf("Backlog = %+v, %v; want 3 observations", b, err)
	}
	// What Since passed over as staged it gives the next time.
	var since []string
	if _, err := j.Since(read, func(e memory.Entry) error { since = append(since, e.ID()); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(since, ids(staged)) {
		t.Fatalf("Since after the commit = %v, want the staged entries", since)
	}
	// Recorded again: kept once.
	if out := mustAppend(t, j, t0.Add(3), call("s", "toolu_1", t0.Add(1))); !out[0].Duplicate || out[0].ID != staged[0].ID() {
		t.Fatalf("the same call again = %+v", out)
	}

	t.Run("merged by the next staging", func(t *testing.T) {
		startStaging(t, j).Close()
		err = j.view(func(tx *bolt.Tx) error {
			if hasParts(tx) {
				t.Error("a part is left after the next staging")
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		mustCheck(t, j)
		if got := timeline(t, j, "s"); len(got) != 3 {
			t.Fatalf("timeline after the merge = %v", ids(got))
		}
	})
	t.Run("taken by a flush", func(t *testing.T) {
		s := startStaging(t, j)
		defer s.Close()
		stage(t, s, prepared(t, observation("s", "Edit", memory.Episodic, t0.Add(4))))
		if _, err := s.Commit(); err != nil {
			t.Fatal(err)
		}
		batches, err := j.PrepareBatches("base", t0.Add(5))
		if err != nil || len(batches) != 1 || len(batches[0].Entries) != 4 {
			t.Fatalf("PrepareBatches = %v, %v; want one batch of 4", batches, err)
		}
		if b, err := j.Backlog(); err != nil || b.Observations != 0 {
			t.Fatalf("Backlog after planning = %+v, %v", b, err)
		}
		mustCheck(t, j)
	})
}

// A large record's index keys are written with its parts, not by one last transaction:
// each transaction holds a part, and the last one what it takes to make them visible.
func TestStagingWritesItsIndexesWithItsParts(t *testing.T) {
	j := newJournal(t)
	s := startStaging(t, j)
	defer s.Close()
	stage(t, s, prepared(t, observation("s", "Read", memory.Semantic, t0), call("s", "toolu_1", t0.Add(1))))
	err := j.view(func(tx *bolt.Tx) error {
		own := tx.Bucket(bucketStagings).Bucket([]byte(s.id))
		for _, name := range indexBuckets {
			want := 2
			if bytes.Equal(name, bucketCalls) {
				want = 1
			}
			if n := own.Bucket(name).Stats().KeyN; n != want {
				t.Errorf("the staging's own %s holds %d keys, want %d", name, n, want)
			}
			if n := tx.Bucket(name).Stats().KeyN; n != 0 {
				t.Errorf("%s holds %d keys before the commit, want none", name, n)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
