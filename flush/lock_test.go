package flush

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/agmem/agmem/internal/flock"
)

// A flush waiting for the writer lock waits past its timeout for as long as the flush
// holding it marks progress.
func TestLockWaitsForAFlushThatMakesProgress(t *testing.T) {
	dir := t.TempDir()
	held, err := flock.Acquire(lockPath(dir), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// Marks ten times a timeout, so that a loaded machine (CI) that runs the marker late
	// does not make the holder look stuck.
	const timeout = time.Second
	go func() {
		for i := 0; i < 30; i++ { // three timeouts' worth of rounds
			time.Sleep(timeout / 10)
			markProgress(dir)
		}
		held.Release()
	}()
	lock, err := lockWaiting(lockPath(dir), timeout)
	if err != nil {
		t.Fatalf("gave up on a flush that was making progress: %v", err)
	}
	lock.Release()
}

// It gives up once the holder has shown no progress for the whole timeout.
func TestLockGivesUpOnAFlushWithoutProgress(t *testing.T) {
	dir := t.TempDir()
	held, err := flock.Acquire(lockPath(dir), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	long := time.Now().Add(-time.Hour)
	if err := os.Chtimes(lockPath(dir), long, long); err != nil {
		t.Fatal(err)
	}
	if _, err := lockWaiting(lockPath(dir), 100*time.Millisecond); !errors.Is(err, flock.ErrTimeout) {
		t.Errorf("lockWaiting = %v, want a timeout", err)
	}
}
