package vcs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// lockFile is git's way of changing a file: path.lock is created exclusively, written,
// and renamed over path. Git commands that run beside agmem take the same lock, so
// neither undoes the other's change.
//
// A lock agmem takes is also hard-linked under .git/agmem/locks/, so that a later agmem
// can tell its own lock, left behind by a process that was killed, from one a git
// command holds: it removes the first and never the second. Callers hold the memory
// repo's writer lock (flush.Lock), so no other agmem process can be using an agmem lock.
type lockFile struct {
	*os.File
	path   string // the file the lock is for
	marker string
	done   bool
}

// errLockHeld is returned when path.lock stays taken by someone else.
var errLockHeld = errors.New("is locked by another git process")

// lockWait bounds how long takeLock waits for a lock another process holds.
const lockWait = 2 * time.Second

func (r *Repo) takeLock(path string) (*lockFile, error) {
	name := path + ".lock"
	rel, err := filepath.Rel(r.gitDir, name)
	if err != nil {
		return nil, err
	}
	marker := filepath.Join(r.gitDir, "agmem", "locks", strings.ReplaceAll(filepath.ToSlash(rel), "/", "%"))
	deadline := time.Now().Add(lockWait)
	for {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			os.Remove(marker)
			if err := os.MkdirAll(filepath.Dir(marker), 0o755); err == nil {
				os.Link(name, marker) // without it, a crash leaves a lock a person must remove
			}
			return &lockFile{File: f, path: path, marker: marker}, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if leftByAgmem(name, marker) {
			os.Remove(name)
			os.Remove(marker)
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s %w (%s exists; if no git command is running, remove it)", path, errLockHeld, name)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// leftByAgmem reports whether the lock file is the one an agmem process made.
func leftByAgmem(name, marker string) bool {
	lock, err := os.Lstat(name)
	if err != nil {
		return false
	}
	mine, err := os.Lstat(marker)
	return err == nil && os.SameFile(lock, mine)
}

// commit puts what was written in place of the file; with durable, it is on disk first.
func (l *lockFile) commit(durable bool) error {
	if durable {
		if err := l.Sync(); err != nil {
			return err
		}
	}
	if err := l.Close(); err != nil {
		return err
	}
	if err := os.Rename(l.Name(), l.path); err != nil {
		return err
	}
	l.done = true
	os.Remove(l.marker)
	if durable {
		return syncDir(filepath.Dir(l.path))
	}
	return nil
}

// abort gives the lock up unless commit succeeded; it is safe to defer.
func (l *lockFile) abort() {
	if !l.done {
		l.Close()
		os.Remove(l.Name())
		os.Remove(l.marker)
		l.done = true
	}
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}
