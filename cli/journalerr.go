package cli

import (
	"errors"
	"syscall"

	"github.com/agmem/agmem/journal"
	"github.com/agmem/agmem/vcs"
)

// hintFor is the advice that goes with err. Trouble with the journal file or its disk,
// or a detached HEAD, comes first: it is the cause, whichever command met it, and what
// to do about it is the same.
func hintFor(err error) string {
	switch {
	case errors.Is(err, journal.ErrDamaged):
		return `"agmem verify" says what is wrong; move .agmem/journal.db aside to record again (what is in git is kept; what was not yet flushed stays only in the file moved)`
	case errors.Is(err, journal.ErrNewerSchema):
		return "upgrade agmem: a newer version wrote this journal"
	case errors.Is(err, journal.ErrReadOnly), errors.Is(err, syscall.EROFS):
		return "make .agmem/ and the files in it writable (a read-only mount, chmod or chattr +i stops agmem)"
	case errors.Is(err, journal.ErrDiskFull), errors.Is(err, syscall.ENOSPC):
		return "free some space on the disk that holds the memory repo; what was recorded before is kept"
	case errors.Is(err, vcs.ErrDetached):
		return `check the memory repo's branch out again (e.g. "git switch main"): agmem commits only to a branch, and nothing recorded is lost`
	}
	var h *Hinted
	if errors.As(err, &h) {
		return h.Hint
	}
	return ""
}
