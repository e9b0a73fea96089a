package journal

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agmem/agmem/memory"
)

// commitAll takes every pending entry through a flush's intent, mark and finish.
func commitAll(t *testing.T, j *Journal, now time.Time) []*Batch {
	t.Helper()
	batches, err := j.PrepareBatches("", now)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		if err := j.MarkCommitted(b, "c-"+b.ID, Signing{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Finish(batches, now); err != nil {
		t.Fatal(err)
	}
	return batches
}

func TestForgetDropsOnlyOldCommittedSessions(t *testing.T) {
	j := newJournal(t)
	old, recent := t0, t0.Add(10*24*time.Hour)
	cutoff := t0.Add(7 * 24 * time.Hour)
	oldCall := call("old", "toolu_1", old)
	mustAppend(t, j, old, oldCall, observation("old", "Read", memory.Semantic, old.Add(time.Second)), event("old", "Stop", old))
	mustAppend(t, j, recent, observation("recent", "Read", memory.Semantic, recent))
	mustAppend(t, j, old, observation("in-batch", "Read", memory.Semantic, old), observation("pending", "Read", memory.Semantic, old))
	// The open session stays, however old.
	mustAppend(t, j, old, memory.Entry{Event: &memory.Event{ID: memory.NewID(old), Timestamp: old, Name: "UserPromptSubmit"}})
	commitAll(t, j, recent)
	// One session has entries in a batch no flush finished; another has one pending.
	mustAppend(t, j, old, observation("in-batch", "Bash", memory.Episodic, old.Add(time.Minute)))
	if _, err := j.PrepareBatches("", recent); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, j, old, observation("pending", "Bash", memory.Episodic, old.Add(time.Minute)))

	f, err := j.Forget(cutoff)
	if err != nil {
		t.Fatal(err)
	}
	if f != (Forgotten{Sessions: 1, Entries: 3}) {
		t.Errorf("Forget reported %+v, want 1 session and 3 entries", f)
	}
	known := map[string]bool{}
	for _, s := range sessions(t, j) {
		known[s.ID] = true
	}
	for id, want := range map[string]bool{"old": false, "in-batch": true, "pending": true, "recent": true} {
		if known[id] != want {
			t.Errorf("after Forget, the journal knows session %s: %v, want %v", id, known[id], want)
		}
	}
	if len(known) != 4 { // the three kept, and the open session
		t.Errorf("sessions left: %v", known)
	}
	if got := timeline(t, j, "old"); len(got) != 0 {
		t.Errorf("the timeline still holds %d entries of a forgotten session", len(got))
	}
	if got := timeline(t, j, "recent"); len(got) != 1 {
		t.Errorf("the timeline of a kept session holds %d entries", len(got))
	}

	// Recorded again after gc: still one observation, by id and by tool_use_id.
	again := mustAppend(t, j, recent, oldCall)
	sameCall := call("old", "toolu_1", recent)
	byCall := mustAppend(t, j, recent, sameCall)
	if !again[0].Duplicate || !byCall[0].Duplicate || byCall[0].ID != oldCall.ID() {
		t.Errorf("recorded again after gc: %+v and %+v, want duplicates of %s", again, byCall, oldCall.ID())
	}
	if b, err := j.Backlog(); err != nil || b.Observations != 1 { // session "pending"'s, no more
		t.Errorf("backlog after recording forgotten entries again: %+v, %v", b, err)
	}
}

func TestCompactKeepsEveryConcurrentRecord(t *testing.T) {
	j := newJournal(t)
	var entries []memory.Entry
	for i := range 3000 {
		e := observation(fmt.Sprintf("s%d", i%10), "Read", memory.Semantic, t0.Add(time.Duration(i)*time.Second))
		e.Observation.Result = []byte(fmt.Sprintf("%q", fmt.Sprint(make([]byte, 300))))
		entries = append(entries, e)
	}
	mustAppend(t, j, t0, entries...)
	commitAll(t, j, t0)
	if _, err := j.Forget(t0.Add(365 * 24 * time.Hour)); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	var recorded []string
	wg.Go(func() {
		for i := range 50 {
			out, err := j.Append(Entries([]memory.Entry{observation("live", "Bash", memory.Episodic, t0.Add(time.Duration(i)*time.Millisecond))}), AppendOptions{IdleGap: gap, Now: t0})
			if err != nil {
				t.Errorf("record during the compaction: %v", err)
				return
			}
			recorded = append(recorded, out[0].ID)
		}
	})
	before, after, err := j.Compact()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if after >= before {
		t.Errorf("compaction did not shrink the journal: %d bytes, then %d", before, after)
	}
	if got := ids(timeline(t, j, "live")); len(got) != len(recorded) {
		t.Errorf("%d records made during the compaction, %d in the journal after it", len(recorded), len(got))
	}
	if _, err := os.Stat(j.Path() + ".compact"); !os.IsNotExist(err) {
		t.Errorf("the compaction's file is left behind: %v", err)
	}
}

// TestGCOnAHundredThousandObservations records 100,000 calls in one transaction,
// commits them as a flush would, and checks that gc leaves a journal a fraction of the
// size that still knows every call it forgot.
func TestGCOnAHundredThousandObservations(t *testing.T) {
	j := newJournal(t)
	entries := make([]memory.Entry, 100_000)
	for i := range entries {
		entries[i] = call(fmt.Sprintf("s%d", i%20), fmt.Sprintf("toolu_%06d", i), t0.Add(time.Duration(i)*time.Millisecond))
		entries[i].Observation.Result = []byte(`"` + fmt.Sprint(i) + strings.Repeat(" result", 40) + `"`)
	}
	mustAppend(t, j, t0, entries...)
	commitAll(t, j, t0)
	st, err := os.Stat(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	recorded := st.Size()
	f, err := j.Forget(t0.Add(7 * 24 * time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if f != (Forgotten{Sessions: 20, Entries: 100_000}) {
		t.Errorf("Forget = %+v, want 20 sessions and 100000 entries", f)
	}
	before, after, err := j.Compact()
	if err != nil {
		t.Fatal(err)
	}
	// Against the journal as recorded: Forget's own transactions grow the file by what
	// they free, which compaction gives back, and say nothing of what gc achieves. What
	// stays is the index that keeps a call recorded again from being kept twice.
	t.Logf("journal of 100,000 observations: %d bytes as recorded, %d before compaction, %d after", recorded, before, after)
	if after > recorded/3 {
		t.Errorf("gc left %d of %d bytes", after, recorded)
	}
	if len(sessions(t, j)) != 0 {
		t.Errorf("sessions left after gc: %v", sessions(t, j))
	}
	again := mustAppend(t, j, t0, call("s7", "toolu_000007", t0), entries[99_999])
	if !again[0].Duplicate || again[0].ID != entries[7].ID() || !again[1].Duplicate {
		t.Errorf("recorded again after gc: %+v", again)
	}
}
