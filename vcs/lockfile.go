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
	*os.File        // open on the lock (and its marker: they are one file)
	path     string // the file the lock is for
	name     string // path.lock
	marker   string
	done     bool
}

// errLockHeld is returned when path.lock stays taken by someone else.
var errLockHeld = errors.New("is locked by another git process")

// lockWait bounds how long takeLock waits for a lock another process holds.
const lockWait = 2 * time.Second

func (r *Git) takeLock(path string) (*lockFile, error) {
	name := path + ".lock"
	rel, err := filepath.Rel(r.gitDir, name)
	if err != nil {
		return nil, err
	}
	marker := filepath.Join(r.gitDir, "agmem", "locks", strings.ReplaceAll(filepath.ToSlash(rel), "/", "%"))
	if err := os.MkdirAll(filepath.Dir(marker), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	deadline := time.Now().Add(lockWait)
	for {
		if leftByAgmem(name, marker) {
			os.Remove(name)
		}
		os.Remove(marker) // alone, a marker is stale: its process died before linking, or after committing
		// The lock is made as the marker, then linked to its git name, which fails if that
		// name exists: there is no moment at which a lock of agmem's exists without its
		// marker, whenever the process is killed.
		f, err := os.OpenFile(marker, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		err = os.Link(marker, name)
		if err == nil {
			return &lockFile{File: f, path: path, name: name, marker: marker}, nil
		}
		f.Close()
		os.Remove(marker)
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s %w (%s exists; if no git command is running, remove it)", path, errLockHeld, name)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// leftByAgmem reports whether the lock file is the one an agmem process made: the
// lock and its marker are one file.
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
	if err := os.Rename(l.name, l.path); err != nil {
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
		os.Remove(l.name)
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
