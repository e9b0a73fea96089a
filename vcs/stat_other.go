//go:build !linux

package vcs

import (
	"os"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// fillStat copies the size and time; git re-reads such a file once to confirm it.
func fillStat(e *index.Entry, fi os.FileInfo) {
	e.Size = uint32(fi.Size())
	e.ModifiedAt = fi.ModTime()
	e.CreatedAt = fi.ModTime()
}
