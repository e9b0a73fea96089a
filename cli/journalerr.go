package cli

import (
	"errors"

	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/vcs"
)

// hintFor is the advice that goes with err: a detached HEAD's, or the journal's and the
// disk's (see hint.For), or the error's own.
func hintFor(err error) string {
	if errors.Is(err, vcs.ErrDetached) {
		return `check the memory repo's branch out again (e.g. "git switch main"): agmem commits only to a branch, and nothing recorded is lost`
	}
	return hint.For(err)
}
