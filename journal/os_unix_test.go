//go:build unix

package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agmem/agmem/memory"
)

// TestCompactKeepsModeAndGroup: the compacted journal has the journal's mode, not as
// the umask cuts a new file's, and (where this process may give it) its group: a
// journal shared by a group's users stays writable to their hooks after agmem gc.
func TestCompactKeepsModeAndGroup(t *testing.T) {
	j := newJournal(t)
	forgetAll(t, j, appendCalls(t, j))
	was := inode(t, j)
	if err := os.Chmod(j.path, 0o666); err != nil {
		t.Fatal(err)
	}
	group := os.Getgid()
	if os.Getuid() == 0 {
		group = 65534 // another group, which root may give
		if err := os.Chown(j.path, -1, group); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := j.Compact(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(j.path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o666 {
		t.Errorf("mode %v after compaction, want 0666", fi.Mode().Perm())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Gid) != group {
		t.Errorf("group %d after compaction, want %d", st.Gid, group)
	}
	if inode(t, j) == was {
		t.Error("the journal was not compacted")
	}
}

// TestCompactLeavesAJournalWithFewFreePages: a journal whose free pages are a small
// share of it is not copied (a year's takes seconds, under the lock every record
// waits on): the file stays the one it was; the same journal after gc forgot most of
// it is copied.
func TestCompactLeavesAJournalWithFewFreePages(t *testing.T) {
	j := newJournal(t)
	now := appendCalls(t, j)
	was := inode(t, j)
	before, after, err := j.Compact()
	if err != nil || before != after || inode(t, j) != was {
		t.Errorf("Compact of a journal with few free pages: %d -> %d bytes, %v; the file rewritten: %v", before, after, err, inode(t, j) != was)
	}
	forgetAll(t, j, now)
	before, after, err = j.Compact()
	if err != nil || after*2 > before || inode(t, j) == was {
		t.Errorf("Compact after gc forgot every entry: %d -> %d bytes, %v; the file rewritten: %v", before, after, err, inode(t, j) != was)
	}
}

// appendCalls appends 2,000 calls of a session, and returns when the last was made.
func appendCalls(t *testing.T, j *Journal) time.Time {
	t.Helper()
	entries := make([]memory.Entry, 2000)
	for i := range entries {
		entries[i] = call("s1", fmt.Sprintf("toolu_%04d", i), t0.Add(time.Duration(i)*time.Millisecond))
		entries[i].Observation.Result = []byte(`"` + strings.Repeat("result ", 100) + `"`)
	}
	mustAppend(t, j, t0, entries...)
	return t0.Add(2 * time.Second)
}

// forgetAll commits what j holds and has gc forget it, which frees most of its pages.
func forgetAll(t *testing.T, j *Journal, now time.Time) {
	t.Helper()
	commitAll(t, j, now)
	if _, err := j.Forget(now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
}

func inode(t *testing.T, j *Journal) uint64 {
	t.Helper()
	st, err := os.Stat(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Ino
}

// TestSpoolTakesTheJournalsModeAndGroup: a journal shared by a group's users (its
// directory setgid and group-writable, the file group-writable) gets a spool each of
// them may drain, whoever wrote it first: the directory and its files take the mode and
// group of .agmem/ and the journal, not the umask's and the writer's.
func TestSpoolTakesTheJournalsModeAndGroup(t *testing.T) {
	j := newJournal(t)
	j.SpoolAfter = 20 * time.Millisecond
	dir := filepath.Dir(j.path)
	group := os.Getgid()
	if os.Getuid() == 0 {
		group = 65534 // another group, which root may give
	}
	for path, mode := range map[string]os.FileMode{dir: 0o775 | os.ModeSetgid, j.path: 0o664} {
		if err := os.Chown(path, -1, group); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	release := holdLock(t, j)
	defer release()
	if _, err := j.Append(Entries([]memory.Entry{call("s1", "toolu_1", t0)}), AppendOptions{Now: t0}); err != nil {
		t.Fatal(err)
	}
	spooled := filepath.Join(j.spoolDir(), spoolFiles(t, j)[0])
	for path, want := range map[string]os.FileMode{j.spoolDir(): os.ModeDir | 0o775 | os.ModeSetgid, spooled: 0o664} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", path, fi.Mode(), want)
		}
		if st := fi.Sys().(*syscall.Stat_t); int(st.Gid) != group {
			t.Errorf("%s: group %d, want %d", path, st.Gid, group)
		}
	}
}
