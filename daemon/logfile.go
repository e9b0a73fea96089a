package daemon

import (
	"fmt"
	"os"
	"sync"
)

// LogFile is the daemon's log: appended to, and moved aside to <path>.1 (replacing the
// one before) when a write would take it past its size, so that it never grows past
// about twice that size on disk.
type LogFile struct {
	mu   sync.Mutex
	path string
	max  int64
	f    *os.File
	size int64
}

// OpenLog opens the log at path for appending, rotated past max bytes.
func OpenLog(path string, max int) (*LogFile, error) {
	l := &LogFile{path: path, max: int64(max)}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *LogFile) open() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("open log: %w", err)
	}
	l.f, l.size = f, fi.Size()
	return nil
}

// Write appends p, one log record, whole to one file.
func (l *LogFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.size > 0 && l.size+int64(len(p)) > l.max {
		l.f.Close()
		// Should the move fail, the log goes on in the same file rather than nowhere.
		os.Rename(l.path, l.path+".1")
		if err := l.open(); err != nil {
			return 0, err
		}
	}
	n, err := l.f.Write(p)
	l.size += int64(n)
	return n, err
}

// Close closes the log.
func (l *LogFile) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}
