// Package flock owns agmem's advisory file locks: the short lock that serialises access
// to the journal, and the long one that lets only one flush run at a time.
//
// A lock is held by an open file and dies with the process that holds it: a process
// killed with SIGKILL leaves no stale lock behind.
package flock

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// ErrTimeout is returned when another process kept the lock for the whole timeout.
var ErrTimeout = errors.New("lock is held by another process")

// Lock is a held lock. Release it exactly once.
type Lock struct{ f *os.File }

// Acquire takes an exclusive lock on path (created if missing), waiting at most timeout.
//
// It waits in the kernel rather than polling, so a waiter wakes the moment the holder
// releases, instead of sleeping in 50 ms steps as bbolt's own lock does.
func Acquire(path string, timeout time.Duration) (*Lock, error) {
	return AcquireWhile(path, timeout, nil)
}

// AcquireWhile is Acquire that, each time timeout passes, asks progressing whether the
// holder is still getting somewhere, and if so waits another timeout. One waiter waits
// all along: it keeps its place, and leaves none behind to take the lock later.
func AcquireWhile(path string, timeout time.Duration, progressing func() bool) (*Lock, error) {
	f, err := open(path)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	if err := tryLock(f); err == nil {
		return &Lock{f}, nil
	}
	done := make(chan error, 1)
	go func() { done <- waitLock(f) }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("lock %s: %w", path, err)
			}
			return &Lock{f}, nil
		case <-timer.C:
			if progressing != nil && progressing() {
				timer.Reset(timeout)
				continue
			}
			// The waiting goroutine may still get the lock; closing the file releases it then.
			go func() { <-done; f.Close() }()
			return nil, fmt.Errorf("lock %s: %w after %s", path, ErrTimeout, timeout)
		}
	}
}

// Release gives the lock up.
func (l *Lock) Release() error {
	unlock(l.f)
	return l.f.Close()
}

// open opens the lock file, made if missing. One that exists on a read-only file system
// is opened for reading: a lock needs no write access, and what reads a read-only memory
// repo still takes its turn (nothing can write there). Any other error is the caller's
// to see: a lock file another user made says so, rather than failing later.
func open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if errors.Is(err, syscall.EROFS) {
		if ro, rerr := os.Open(path); rerr == nil {
			return ro, nil
		}
	}
	return f, err
}
