package memrepo

import (
	"testing"
	"time"

	"github.com/agmem/agmem/journal"
)

// TestLockUntil: a repo's journal calls share the wait LockUntil gives them, but for a
// moment's each; without it, each waits the journal's default.
func TestLockUntil(t *testing.T) {
	dir := t.TempDir()
	if got := (Repo{Root: dir}).Journal().Timeout; got != journal.DefaultTimeout {
		t.Errorf("no LockUntil: %v, want %v", got, journal.DefaultTimeout)
	}
	if got := (Repo{Root: dir, LockUntil: time.Now().Add(time.Hour)}).Journal().Timeout; got <= 59*time.Minute || got > time.Hour {
		t.Errorf("an hour left: %v", got)
	}
	if got := (Repo{Root: dir, LockUntil: time.Now().Add(-time.Hour)}).Journal().Timeout; got != MinLockWait {
		t.Errorf("none left: %v, want %v", got, MinLockWait)
	}
}
