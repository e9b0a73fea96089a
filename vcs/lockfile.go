package vcs

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// staleLock is the age past which a git lock file is taken to be left behind by a
// killed process: git holds one for milliseconds.
const staleLock = 30 * time.Second

// lockFile is git's way of changing a file: path.lock is created exclusively, written,
// and renamed over path. Git commands that run beside agmem take the same lock, so
// neither undoes the other's change.
type lockFile struct {
	*os.File
	path string
	done bool
}

// errLockHeld is returned when path.lock stays taken for about two seconds.
var errLockHeld = errors.New("is locked by another git process")

func takeLock(path string) (*lockFile, error) {
	name := path + ".lock"
	for attempt := 0; ; attempt++ {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			return &lockFile{File: f, path: path}, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if fi, serr := os.Stat(name); serr == nil && time.Since(fi.ModTime()) > staleLock {
			os.Remove(name)
			continue
		}
		if attempt == 100 {
			return nil, fmt.Errorf("%s %w (%s exists)", path, errLockHeld, name)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// commit puts what was written in place of the file.
func (l *lockFile) commit() error {
	if err := l.Close(); err != nil {
		return err
	}
	if err := os.Rename(l.Name(), l.path); err != nil {
		return err
	}
	l.done = true
	return nil
}

// abort gives the lock up unless commit succeeded; it is safe to defer.
func (l *lockFile) abort() {
	if !l.done {
		l.Close()
		os.Remove(l.Name())
	}
}
