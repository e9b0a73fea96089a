//go:build unix

package flock

import (
	"errors"
	"os"
	"syscall"
)

func tryLock(f *os.File) error {
	return ignoreEINTR(func() error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) })
}

// held says whether tryLock failed because another process holds the lock.
func held(err error) bool { return errors.Is(err, syscall.EWOULDBLOCK) }

func waitLock(f *os.File) error {
	return ignoreEINTR(func() error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX) })
}

func unlock(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

func ignoreEINTR(call func() error) error {
	for {
		if err := call(); err != syscall.EINTR {
			return err
		}
	}
}
