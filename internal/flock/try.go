package flock

import (
	"fmt"
)

// TryAcquire takes the lock on path (created if missing) only if it is free now, and
// returns ErrTimeout at once if not. Unlike Acquire with a zero timeout, it leaves no
// waiter behind that would take the lock later.
func TryAcquire(path string) (*Lock, error) {
	f, err := open(path)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	if err := tryLock(f); err != nil {
		f.Close()
		if held(err) {
			return nil, fmt.Errorf("lock %s: %w", path, ErrTimeout)
		}
		// Not held: the lock cannot be taken at all (a file system without locks).
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &Lock{f}, nil
}
