package journal

import (
	"errors"
	"os"
	"path/filepath"
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

func mustCheck(t *testing.T, j *Journal) {
	t.Helper()
	findings, err := j.Check()
	if err != nil || len(findings) > 0 {
		t.Fatalf("Check = %q, %v", findings, err)
	}
}

func TestStagedEntriesAreSeenOnlyOnceAppended(t *testing.T) {
	j := newJournal(t)
	s := startStaging(t, j)
	defer s.Close()
	// The last one names no session: Stage places it in the open session (a new one
	// here), as Append would, and stores it with the others.
	loose := observation("", "Read", memory.Semantic, t0.Add(3))
	ps := prepared(t, observation("s", "Read", memory.Semantic, t0), call("s", "toolu_1", t0.Add(1)),
		event("s", "UserPromptSubmit", t0.Add(2)), loose)
	if err := s.Stage(ps[:2]); err != nil {
		t.Fatal(err)
	}
	if err := s.Stage(ps[2:]); err != nil {
		t.Fatal(err)
	}
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

	out, err := j.Append(ps, AppendOptions{IdleGap: gap, Now: t0.Add(4), Staging: s})
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range out {
		if a.Duplicate || a.ID == "" {
			t.Errorf("entry %d: %+v", i, a)
		}
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
	if err := s2.Stage(again); err != nil {
		t.Fatal(err)
	}
	out, err = j.Append(again, AppendOptions{IdleGap: gap, Now: t0.Add(6), Staging: s2})
	if err != nil || !out[0].Duplicate || out[0].ID != ps[1].head.id {
		t.Fatalf("Append of a call recorded before = %+v, %v", out, err)
	}
	mustStore(t, j, 5, 0)
	mustCheck(t, j)
}

func TestStagingClosedWithoutAppendLeavesNothing(t *testing.T) {
	j := newJournal(t)
	s := startStaging(t, j)
	if err := s.Stage(prepared(t, observation("s", "Read", memory.Semantic, t0))); err != nil {
		t.Fatal(err)
	}
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
			if err := live.Stage(prepared(t, observation("s", "Read", memory.Semantic, t0))); err != nil {
				t.Fatal(err)
			}
			dead := startStaging(t, j)
			if err := dead.Stage(prepared(t, observation("s", "Grep", memory.Semantic, t0), observation("s", "Glob", memory.Semantic, t0))); err != nil {
				t.Fatal(err)
			}
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
	if err := s.Stage(ps[:1]); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(stagingLock(j, s.id)); err != nil {
		t.Fatal(err)
	}
	startStaging(t, j).Close()
	if err := s.Stage(ps[1:]); !errors.Is(err, ErrStagingDropped) {
		t.Fatalf("Stage after the staging was dropped: %v, want ErrStagingDropped", err)
	}
	if _, err := j.Append(ps, AppendOptions{IdleGap: gap, Now: t0, Staging: s}); !errors.Is(err, ErrStagingDropped) {
		t.Fatalf("Append after the staging was dropped: %v, want ErrStagingDropped", err)
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
