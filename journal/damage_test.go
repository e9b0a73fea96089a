package journal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/agmem/agmem/memory"
)

// filledJournal is a journal holding enough entries for its entries bucket to span
// several pages.
func filledJournal(t *testing.T) *Journal {
	t.Helper()
	j := newJournal(t)
	for i := 0; i < 5; i++ {
		at := t0.Add(time.Duration(i) * time.Minute)
		var batch []memory.Entry
		for k := 0; k < 40; k++ {
			batch = append(batch, observation(fmt.Sprintf("s%d", k%3), "Read", memory.Semantic, at.Add(time.Duration(k)*time.Millisecond)))
		}
		mustAppend(t, j, at, batch...)
	}
	return j
}

// usedSize is how much of the journal file its pages take: bbolt grows the file ahead.
func usedSize(t *testing.T, j *Journal) int64 {
	t.Helper()
	var size int64
	readRaw(t, j, func(tx *bolt.Tx) { size = tx.Size() })
	return size
}

// readRaw reads the journal file with bbolt alone.
func readRaw(t *testing.T, j *Journal, fn func(*bolt.Tx)) {
	t.Helper()
	db, err := bolt.Open(j.path, 0, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error { fn(tx); return nil })
}

// rootPage is where the entries bucket's tree begins in the file.
func rootPage(t *testing.T, j *Journal) int64 {
	t.Helper()
	var at int64
	readRaw(t, j, func(tx *bolt.Tx) {
		at = int64(tx.Bucket(bucketEntries).RootPage()) * int64(tx.DB().Info().PageSize)
	})
	if at == 0 {
		t.Fatal("the entries bucket is inline: the journal is too small for this test")
	}
	return at
}

// overwrite puts b at offset in the journal file and returns what was there.
func overwrite(t *testing.T, j *Journal, offset int64, b []byte) []byte {
	t.Helper()
	f, err := os.OpenFile(j.path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	was := make([]byte, len(b))
	if _, err := f.ReadAt(was, offset); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(b, offset); err != nil {
		t.Fatal(err)
	}
	return was
}

// pageFlags is where a bbolt page header keeps the page's type.
const pageFlags = 8

// TestDamagedPageIsAnError checks that a page bbolt panics on comes back as ErrDamaged
// from reads and writes alike, that the process can go on using the journal (no lock
// left held), and that the journal works again once the page is whole.
func TestDamagedPageIsAnError(t *testing.T) {
	j := filledJournal(t)
	j.Timeout = 2 * time.Second
	root := rootPage(t, j)
	was := overwrite(t, j, root+pageFlags, []byte{0xff, 0xff})

	for i := 0; i < 2; i++ {
		if _, err := j.Backlog(); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "page") {
			t.Fatalf("Backlog of a damaged journal: %v, want ErrDamaged naming the page", err)
		}
		if _, err := j.Append(Entries(nil), AppendOptions{IdleGap: gap, Now: t0}); err != nil && !errors.Is(err, ErrDamaged) {
			t.Fatalf("Append to a damaged journal: %v, want ErrDamaged", err)
		}
		if _, err := j.Append(Entries([]memory.Entry{observation("s9", "Read", memory.Semantic, t0.Add(time.Hour))}), AppendOptions{IdleGap: gap, Now: t0}); !errors.Is(err, ErrDamaged) {
			t.Fatalf("Append to a damaged journal: %v, want ErrDamaged", err)
		}
	}

	overwrite(t, j, root+pageFlags, was)
	if b, err := j.Backlog(); err != nil || b.Observations != 200 {
		t.Fatalf("Backlog once the page is whole again: %+v, %v; want 200 observations", b, err)
	}
	mustAppend(t, j, t0.Add(time.Hour), observation("s9", "Read", memory.Semantic, t0.Add(time.Hour)))
}

// TestBugInAgmemIsNotDamage checks that a panic in agmem's own code inside a transaction
// stays a panic (a bug to report, not a journal to move aside) and leaves the journal
// usable.
func TestBugInAgmemIsNotDamage(t *testing.T) {
	j := filledJournal(t)
	func() {
		defer func() {
			if p := recover(); p == nil {
				t.Error("a panic in agmem's code was swallowed")
			}
		}()
		j.view(func(*bolt.Tx) error {
			var counts map[string]int
			counts["x"]++
			return nil
		})
	}()
	if _, err := j.Backlog(); err != nil {
		t.Fatalf("after a panic in a transaction: %v", err)
	}
}

func TestFileCutShortIsDamaged(t *testing.T) {
	for _, cut := range []struct {
		name string
		size func(int64) int64
	}{
		{"to nothing", func(int64) int64 { return 0 }},
		{"to one page", func(int64) int64 { return int64(os.Getpagesize()) }},
		{"to half its pages", func(used int64) int64 { return used / 2 }},
	} {
		t.Run(cut.name, func(t *testing.T) {
			j := filledJournal(t)
			size := cut.size(usedSize(t, j))
			if err := os.Truncate(j.path, size); err != nil {
				t.Fatal(err)
			}
			if _, err := j.Backlog(); !errors.Is(err, ErrDamaged) {
				t.Errorf("Backlog: %v, want ErrDamaged", err)
			}
			if _, err := j.Append(Entries([]memory.Entry{observation("s9", "Read", memory.Semantic, t0)}), AppendOptions{IdleGap: gap, Now: t0}); !errors.Is(err, ErrDamaged) {
				t.Errorf("Append: %v, want ErrDamaged", err)
			}
			if now, _ := os.Stat(j.path); now.Size() != size {
				t.Errorf("the damaged file went from %d to %d bytes: agmem wrote to it", size, now.Size())
			}
		})
	}
}

// TestCompactOfDamagedJournal checks that gc's compaction stops at a damaged page with
// ErrDamaged and leaves the journal file as it was.
func TestCompactOfDamagedJournal(t *testing.T) {
	j := filledJournal(t)
	overwrite(t, j, rootPage(t, j)+pageFlags, []byte{0xff, 0xff})
	before, err := os.ReadFile(j.path)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := j.Compact(); !errors.Is(err, ErrDamaged) {
		t.Fatalf("Compact of a damaged journal: %v, want ErrDamaged", err)
	}
	if after, _ := os.ReadFile(j.path); !bytes.Equal(before, after) {
		t.Error("Compact changed the damaged journal")
	}
}

// A journal cut to nothing is damaged for Compact as for every other call.
func TestCompactOfEmptiedJournal(t *testing.T) {
	j := filledJournal(t)
	if err := os.Truncate(j.path, 0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := j.Compact(); !errors.Is(err, ErrDamaged) {
		t.Fatalf("Compact of a 0-byte journal: %v, want ErrDamaged", err)
	}
}
