package vcs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// IndexStat is the index as git status reads it to know a worktree file unchanged
// without reading it: the blob each path's entry records, and the stat data it had.
type IndexStat struct {
	index *gitIndex
	at    time.Time // when the index was written
}

// ReadIndexStat reads the index, without its lock: an index is replaced whole, so
// what is read is one version of it.
func (r *Git) ReadIndexStat() (*IndexStat, error) {
	path := filepath.Join(r.gitDir, "index")
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	index, err := readIndex(data, r.gitDir)
	if err != nil {
		return nil, err
	}
	return &IndexStat{index: index, at: fi.ModTime()}, nil
}

// Close lets go of the shared index.
func (s *IndexStat) Close() { s.index.close() }

// Holds says whether the worktree file at path, as fi stats it, holds blob h, as git
// knows it without reading the file: the index records h for path, with the same
// times, device, inode and size; and the file was not changed in the index's last
// second, when another change would leave them all the same (git's racily clean
// entries), and is read.
func (s *IndexStat) Holds(path string, fi os.FileInfo, h plumbing.Hash) bool {
	e, ok := s.index.lookup(path)
	if !ok || !e.holds(h) || !fi.ModTime().Before(s.at.Truncate(time.Second)) {
		return false
	}
	now := newIndexEntry(path, h, fi).raw
	const statEnd, sizeAt = 24, 36 // ctime, mtime, dev and ino; the size after mode, uid and gid
	return bytes.Equal(e.raw[:statEnd], now[:statEnd]) && bytes.Equal(e.raw[sizeAt:sizeAt+4], now[sizeAt:sizeAt+4])
}
