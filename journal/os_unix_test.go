//go:build unix

package journal

import (
	"os"
	"syscall"
	"testing"
)

// TestCompactKeepsModeAndGroup: the compacted journal has the journal's mode, not as
// the umask cuts a new file's, and (where this process may give it) its group: a
// journal shared by a group's users stays writable to their hooks after agmem gc.
func TestCompactKeepsModeAndGroup(t *testing.T) {
	j := filledJournal(t)
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
}
