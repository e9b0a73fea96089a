package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/agmem/agmem/internal/flock"
	"github.com/agmem/agmem/memory"
)

// holdLock holds j's lock as another process would (a gc compacting), until the
// returned function releases it.
func holdLock(t *testing.T, j *Journal) func() {
	t.Helper()
	lock, err := flock.Acquire(j.lock, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return func() { lock.Release() }
}

func spoolFiles(t *testing.T, j *Journal) []string {
	t.Helper()
	files, err := os.ReadDir(j.spoolDir())
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Name())
	}
	return names
}

func checkSpooled(t *testing.T, j *Journal, waiting, refused int) {
	t.Helper()
	w, r, err := j.Spooled()
	if err != nil || w != waiting || r != refused {
		t.Errorf("Spooled() = %d waiting, %d refused, %v; want %d and %d (spool holds %q)", w, r, err, waiting, refused, spoolFiles(t, j))
	}
}

// TestAppendKeepsAsideWhatTheLockKeepsOut: an append that another process keeps from
// the journal past SpoolAfter returns at once with its entries kept aside, durable; the
// next write appends them, in the session each named or the open one, once each.
func TestAppendKeepsAsideWhatTheLockKeepsOut(t *testing.T) {
	j := newJournal(t)
	j.SpoolAfter = 20 * time.Millisecond
	named, unnamed := call("s1", "toolu_1", t0), observation("", "Read", memory.Semantic, t0.Add(time.Second))
	release := holdLock(t, j)
	out, err := j.Append(Entries([]memory.Entry{named, unnamed}), AppendOptions{IdleGap: gap, Now: t0})
	if err != nil {
		t.Fatalf("Append while the journal is held: %v", err)
	}
	want := []Appended{{ID: named.ID(), Spooled: true}, {ID: unnamed.ID(), Spooled: true}}
	if !slices.Equal(out, want) {
		t.Errorf("Append = %+v, want %+v", out, want)
	}
	release()
	checkSpooled(t, j, 1, 0)
	if got := timeline(t, j, "s1"); len(got) != 0 { // a reader appends nothing
		t.Errorf("read before the next write: %v", ids(got))
	}

	later := call("s1", "toolu_2", t0.Add(2*time.Second))
	mustAppend(t, j, t0.Add(2*time.Second), later)
	checkSpooled(t, j, 0, 0)
	if names := spoolFiles(t, j); len(names) != 0 {
		t.Errorf("spool left %q", names)
	}
	if got := ids(timeline(t, j, "s1")); !slices.Equal(got, []string{named.ID(), later.ID()}) {
		t.Errorf("session s1 holds %q", got)
	}
	ss := sessions(t, j)
	if len(ss) != 2 {
		t.Fatalf("sessions %+v, want s1 and the open session", ss)
	}
	again := mustAppend(t, j, t0.Add(3*time.Second), named, unnamed)
	if !again[0].Duplicate || !again[1].Duplicate {
		t.Errorf("the spooled entries recorded again: %+v, want both kept once", again)
	}
}

// TestSpoolAppendedBeforeADeathIsOnlyRemoved: a process that dies after appending a
// spool file and before removing it leaves the file, marked appended in the
// transaction that appended it: the next write removes it, appending nothing, and the
// open session its SessionStart began stays the one later calls join.
func TestSpoolAppendedBeforeADeathIsOnlyRemoved(t *testing.T) {
	j := newJournal(t)
	j.SpoolAfter = 20 * time.Millisecond
	start, first := event("", "SessionStart", t0), observation("", "Read", memory.Semantic, t0)
	release := holdLock(t, j)
	if _, err := j.Append(Entries([]memory.Entry{start, first}), AppendOptions{IdleGap: gap, Now: t0}); err != nil {
		t.Fatal(err)
	}
	release()
	name := spoolFiles(t, j)[0]
	kept, err := os.ReadFile(filepath.Join(j.spoolDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	second := observation("", "Read", memory.Semantic, t0.Add(time.Second))
	mustAppend(t, j, t0.Add(time.Second), second)
	if _, err := os.Stat(j.spoolDir()); !os.IsNotExist(err) {
		t.Errorf("the spool drained is still there (%v): every record would read it", err)
	}
	// As a process killed between the transaction and the removal leaves it.
	if err := j.update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(spoolMark(name), nil) }); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(j.spoolDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(j.spoolDir(), name), kept, 0o644); err != nil {
		t.Fatal(err)
	}
	third := observation("", "Read", memory.Semantic, t0.Add(2*time.Second))
	mustAppend(t, j, t0.Add(2*time.Second), third)
	checkSpooled(t, j, 0, 0)
	ss := sessions(t, j)
	if len(ss) != 1 || ss[0].Observations != 3 || ss[0].Events != 1 {
		t.Fatalf("sessions %+v, want one of 3 observations and its start", ss)
	}
	if got := ids(timeline(t, j, ss[0].ID)); !slices.Equal(got, []string{start.ID(), first.ID(), second.ID(), third.ID()}) {
		t.Errorf("the session holds %q", got)
	}
}

// TestSpoolThatCannotBeAppendedIsSetAside: a spool file that is no call (damaged, or
// an entry no transaction takes) does not fail the write that drains it, nor every
// write after it: it is renamed *.refused and counted; a part being written is left
// alone, one a dead process left an hour ago removed, and what no spool writes (a
// directory) left alone.
func TestSpoolThatCannotBeAppendedIsSetAside(t *testing.T) {
	j := newJournal(t)
	dir := j.spoolDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, data string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write("1-damaged.json", `{"now":"2025-03-04T05:06:07Z","entries":[{"observation":`)
	write("2-invalid.json", `{"now":"2025-03-04T05:06:07Z","entries":[{"observation":{"id":"x"}}]}`)
	if err := os.Mkdir(filepath.Join(dir, "0-a-directory.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	young := write(partPrefix+"3.json", `{"now":`)
	old := write(partPrefix+"4.json", `{"now":`)
	hourAgo := time.Now().Add(-partLifetime - time.Minute)
	if err := os.Chtimes(old, hourAgo, hourAgo); err != nil {
		t.Fatal(err)
	}
	e := call("s1", "toolu_1", t0)
	mustAppend(t, j, t0, e)
	if got := ids(timeline(t, j, "s1")); !slices.Equal(got, []string{e.ID()}) {
		t.Errorf("session s1 holds %q", got)
	}
	checkSpooled(t, j, 0, 2)
	want := []string{partPrefix + "3.json", "0-a-directory.json", "1-damaged.refused", "2-invalid.refused"}
	if got := spoolFiles(t, j); !slices.Equal(got, want) {
		t.Errorf("spool holds %q, want %q", got, want)
	}
	if _, err := os.Stat(young); err != nil {
		t.Errorf("a part being written: %v", err)
	}
}

// TestWatchedAppendIsNeverSpooled: a followed file's mark moves in the transaction of
// the lines read up to it, so its append waits and fails as before, and the lines are
// read again.
func TestWatchedAppendIsNeverSpooled(t *testing.T) {
	j := newJournal(t)
	j.Timeout, j.SpoolAfter = 50*time.Millisecond, 10*time.Millisecond
	release := holdLock(t, j)
	defer release()
	_, err := j.Append(Entries([]memory.Entry{call("s1", "toolu_1", t0)}),
		AppendOptions{Now: t0, Watched: &Watched{Path: "/a.jsonl", Mark: WatchMark{Offset: 10}}})
	if !errors.Is(err, ErrLocked) {
		t.Errorf("watched append while held: %v, want ErrLocked", err)
	}
	if names := spoolFiles(t, j); len(names) != 0 {
		t.Errorf("spool holds %q", names)
	}
}

// TestDrainOfABacklogIsBounded: one write adds what it can of a backlog of calls kept
// aside within spoolBudget, and leaves the rest to the next writes; Drain adds it all;
// a spool file of no entries, which no Append writes, is refused.
func TestDrainOfABacklogIsBounded(t *testing.T) {
	j := newJournal(t)
	j.SpoolAfter = time.Millisecond
	release := holdLock(t, j)
	const backlog = 600
	for i := range backlog {
		if _, err := j.Append(Entries([]memory.Entry{call("s1", fmt.Sprintf("toolu_%d", i), t0)}), AppendOptions{Now: t0}); err != nil {
			t.Fatal(err)
		}
	}
	release()
	j.SpoolAfter = 0 // the waiters left behind by the appends above hold the lock a moment each
	if err := os.WriteFile(filepath.Join(j.spoolDir(), "1-empty.json"), []byte(`{"now":"2025-03-04T05:06:07Z","entries":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	spoolBudgetWas := spoolBudget
	spoolBudget = -time.Second // a write past its budget from the start adds none
	mustAppend(t, j, t0, call("s1", "toolu_direct", t0))
	spoolBudget = spoolBudgetWas
	if n := session(t, j, "s1").Observations; n != 1 {
		t.Errorf("a write past its budget added %d spooled calls", n-1)
	}
	if err := j.Drain(); err != nil {
		t.Fatal(err)
	}
	checkSpooled(t, j, 0, 1)
	if n := session(t, j, "s1").Observations; n != backlog+1 {
		t.Errorf("after Drain, %d observations, want %d", n, backlog+1)
	}
}

// TestAppendThatCannotBeKeptAsideWaits: where the spool cannot be written (here a file
// stands at its path; elsewhere a directory this user may not write), an append kept
// from the journal waits for the lock what is left of Timeout, as before there was a
// spool, rather than fail at once.
func TestAppendThatCannotBeKeptAsideWaits(t *testing.T) {
	j := newJournal(t)
	j.SpoolAfter, j.Timeout = 20*time.Millisecond, 5*time.Second
	if err := os.WriteFile(j.spoolDir(), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	release := holdLock(t, j)
	go func() {
		time.Sleep(200 * time.Millisecond)
		release()
	}()
	out, err := j.Append(Entries([]memory.Entry{call("s1", "toolu_1", t0)}), AppendOptions{Now: t0})
	if err != nil || out[0].Spooled {
		t.Fatalf("Append = %+v, %v; want it appended once the lock was let go", out, err)
	}
	if n := session(t, j, "s1").Observations; n != 1 {
		t.Errorf("%d observations, want 1", n)
	}
}
