package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/agmem/agmem/internal/flock"
	"github.com/agmem/agmem/memory"
)

func TestCreate(t *testing.T) {
	dir := t.TempDir()
	j := At(dir)
	if j.Path() != filepath.Join(dir, "journal.db") {
		t.Errorf("Path() = %q", j.Path())
	}
	for range 2 { // idempotent
		if err := j.Create(); err != nil {
			t.Fatal(err)
		}
	}
	if got := readSchema(t, j.Path()); got != strconv.Itoa(SchemaVersion) {
		t.Errorf("schema = %q, want %d", got, SchemaVersion)
	}
	if s := sessions(t, j); len(s) != 0 {
		t.Errorf("a new journal knows sessions %+v", s)
	}
}

// A journal that was never created reads as empty, and reading it makes it.
func TestReadBeforeCreate(t *testing.T) {
	j := At(t.TempDir())
	if s := sessions(t, j); len(s) != 0 {
		t.Errorf("Sessions = %+v", s)
	}
	if _, err := os.Stat(j.Path()); err != nil {
		t.Errorf("the journal file was not made: %v", err)
	}
	j = At(t.TempDir())
	if got := timeline(t, j, "s"); len(got) != 0 {
		t.Errorf("Timeline = %+v", got)
	}
	if _, ok, err := At(t.TempDir()).Session("s"); ok || err != nil {
		t.Errorf("Session on a missing journal = %v, %v", ok, err)
	}
}

func readSchema(t *testing.T, path string) string {
	t.Helper()
	db, err := bolt.Open(path, 0o644, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v string
	if err := db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket([]byte("meta")); b != nil {
			v = string(b.Get([]byte("schema")))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return v
}

// writeSchema sets the schema the way a newer agmem would, with bbolt directly.
func writeSchema(t *testing.T, path, v string) {
	t.Helper()
	db, err := bolt.Open(path, 0o644, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("meta"))
		if err != nil {
			return err
		}
		return b.Put([]byte("schema"), []byte(v))
	}); err != nil {
		t.Fatal(err)
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	newer := strconv.Itoa(SchemaVersion + 1)
	tests := []struct {
		name  string
		setup func(t *testing.T, j *Journal)
	}{
		{"a full journal", func(t *testing.T, j *Journal) {
			if err := j.Create(); err != nil {
				t.Fatal(err)
			}
			mustAppend(t, j, t0, observation("s", "Read", memory.Semantic, t0))
			writeSchema(t, j.Path(), newer)
		}},
		// A newer agmem may have renamed every bucket: only meta is left to read.
		{"a journal with only its meta bucket", func(t *testing.T, j *Journal) {
			writeSchema(t, j.Path(), newer)
		}},
	}
	calls := []struct {
		name string
		call func(j *Journal) error
	}{
		{"Create", func(j *Journal) error { return j.Create() }},
		{"Append", func(j *Journal) error {
			_, err := j.Append(Entries([]memory.Entry{observation("s", "Read", memory.Semantic, t0)}), AppendOptions{IdleGap: gap, Now: t0})
			return err
		}},
		{"Sessions", func(j *Journal) error { _, err := j.Sessions(); return err }},
		{"Session", func(j *Journal) error { _, _, err := j.Session("s"); return err }},
		{"Timeline", func(j *Journal) error { return j.Timeline("s", func(memory.Entry) error { return nil }) }},
		{"LastFlush", func(j *Journal) error { _, err := j.LastFlush(); return err }},
		{"PrepareBatches", func(j *Journal) error { _, err := j.PrepareBatches("", t0); return err }},
		{"Finish", func(j *Journal) error { return j.Finish(nil, t0) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := At(t.TempDir())
			tt.setup(t, j)
			for _, c := range calls {
				if err := c.call(j); !errors.Is(err, ErrNewerSchema) {
					t.Errorf("%s = %v, want ErrNewerSchema", c.name, err)
				}
			}
			// Refused, not changed.
			if got := readSchema(t, j.Path()); got != newer {
				t.Errorf("schema is now %q, want %q left alone", got, newer)
			}
		})
	}
}

func TestCurrentSchemaIsRead(t *testing.T) {
	j := At(t.TempDir())
	writeSchema(t, j.Path(), strconv.Itoa(SchemaVersion))
	mustAppend(t, j, t0, observation("s", "Read", memory.Semantic, t0))
	if got := timeline(t, j, "s"); len(got) != 1 {
		t.Errorf("Timeline = %d entries, want 1", len(got))
	}
}

func TestLockedJournal(t *testing.T) {
	dir := t.TempDir()
	j := At(dir)
	if err := j.Create(); err != nil {
		t.Fatal(err)
	}
	// Another agmem process holds the journal.
	held, err := flock.Acquire(filepath.Join(dir, "journal.lock"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	j.Timeout = 200 * time.Millisecond
	e := observation("s", "Read", memory.Semantic, t0)
	// An append is kept aside (spool.go); every other call fails.
	if out, err := j.Append(Entries([]memory.Entry{e}), AppendOptions{IdleGap: gap, Now: t0}); err != nil || !out[0].Spooled {
		t.Errorf("Append while locked = %+v, %v; want it kept aside", out, err)
	}
	if _, err := j.Sessions(); !errors.Is(err, ErrLocked) {
		t.Errorf("Sessions while locked = %v, want ErrLocked", err)
	}
	if _, err := j.PrepareBatches("", t0); !errors.Is(err, ErrLocked) {
		t.Errorf("PrepareBatches while locked = %v, want ErrLocked", err)
	}

	if err := held.Release(); err != nil {
		t.Fatal(err)
	}
	out := mustAppend(t, j, t0, e)
	if !out[0].Duplicate {
		t.Errorf("the entry kept aside while locked is not in the journal after the next write")
	}
	if got := timeline(t, j, "s"); len(got) != 1 {
		t.Errorf("Timeline = %d entries, want 1", len(got))
	}
}

// A waiter gets the journal as soon as the holder lets it go, well within its timeout.
func TestLockWaiterProceedsOnRelease(t *testing.T) {
	dir := t.TempDir()
	j := At(dir)
	if err := j.Create(); err != nil {
		t.Fatal(err)
	}
	held, err := flock.Acquire(filepath.Join(dir, "journal.lock"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := j.Append(Entries([]memory.Entry{observation("s", "Read", memory.Semantic, t0)}), AppendOptions{IdleGap: gap, Now: t0})
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("Append returned %v while the journal was locked", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := held.Release(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("Append after release: %v", err)
	}
}

// TestSinceUnknown: known is given each entry's JSON as json.Marshal writes the entry,
// stored compressed or not, and what it knows is passed over; the rest is decoded.
func TestSinceUnknown(t *testing.T) {
	j := newJournal(t)
	small := observation("s", "Glob", memory.Semantic, t0)
	large := observation("s", "Read", memory.Semantic, t0.Add(time.Second))
	large.Observation.Result = json.RawMessage(strconv.Quote(strings.Repeat("a long <result> & more, ", 200)))
	event := memory.Entry{Event: &memory.Event{ID: memory.NewID(t0.Add(2 * time.Second)), SessionID: "s",
		Timestamp: t0.Add(2 * time.Second), Name: "UserPromptSubmit", Text: "fix <b> & go"}}
	mustAppend(t, j, t0, small, large, event)
	var known, decoded []string
	_, err := j.SinceUnknown(0, func(raw []byte) bool {
		var e memory.Entry
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		if want, _ := json.Marshal(e); !bytes.Equal(raw, want) {
			t.Errorf("known was given\n%s\nnot json.Marshal's\n%s", raw, want)
		}
		known = append(known, e.ID())
		return e.ID() != large.ID()
	}, func(e memory.Entry) error {
		decoded = append(decoded, e.ID())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{small.ID(), large.ID(), event.ID()}; !slices.Equal(known, want) {
		t.Errorf("known was asked of %v, want %v", known, want)
	}
	if !slices.Equal(decoded, []string{large.ID()}) {
		t.Errorf("decoded %v, want only the entry known did not know", decoded)
	}

	// Past a transaction's bound of entries, all of them known: each is asked of once,
	// and the number to read from next is the last one's.
	var more []memory.Entry
	for i := range 2*timelineChunk + 10 {
		more = append(more, observation("s", "Glob", memory.Semantic, t0.Add(time.Duration(i+3)*time.Second)))
	}
	mustAppend(t, j, t0, more...)
	asked := 0
	read, err := j.SinceUnknown(0, func([]byte) bool { asked++; return true }, func(e memory.Entry) error {
		return fmt.Errorf("%s decoded", e.ID())
	})
	_, tip, _ := j.Tip()
	if err != nil || asked != 3+len(more) || read != tip {
		t.Errorf("known asked %d times, want %d; read up to %d of %d; %v", asked, 3+len(more), read, tip, err)
	}
}
