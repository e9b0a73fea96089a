package flush

import (
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/render"
	"github.com/agmem/agmem/vcs"
)

// ensureLayout says which layout the tree of tip is written in. When the tree does not
// say (a new repo, or one an older agmem wrote), it puts render.LayoutFile into draft:
// the draft's next commit records it, and from that commit on agmem writes
// render.CurrentLayout. A repo laid out by a newer agmem is refused: this one would
// not know where its files go.
func ensureLayout(repo *vcs.Git, draft *vcs.Draft, tip plumbing.Hash) (render.Layout, error) {
	data, err := repo.FileAt(tip, render.LayoutFile)
	if err != nil {
		return 0, err
	}
	if data == nil {
		return render.CurrentLayout, draft.Put(render.LayoutFile, render.CurrentLayout.File())
	}
	l, err := render.ParseLayout(data)
	if err != nil {
		return 0, hint.With(err, "restore the file from git: git checkout <a good commit> -- "+render.LayoutFile)
	}
	if l > render.CurrentLayout {
		return 0, hint.With(fmt.Errorf("the memory repo is in layout %d; this agmem writes layout %d", l, render.CurrentLayout),
			"upgrade agmem")
	}
	return l, nil
}
