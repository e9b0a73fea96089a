package vcs

import (
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
)

// FilesAt reads the files at paths in commit h as changes Materialize can write: how a
// committed file deleted from the worktree by hand is put back as it was committed.
func (r *Git) FilesAt(h plumbing.Hash, paths []string) ([]Change, error) {
	tree, err := r.Tree(h)
	if err != nil {
		return nil, err
	}
	out := make([]Change, 0, len(paths))
	for _, path := range paths {
		f, err := tree.File(path)
		if err != nil {
			return nil, fmt.Errorf("read %s at %s: %w", path, h, err)
		}
		data, err := f.Contents()
		if err != nil {
			return nil, fmt.Errorf("read %s at %s: %w", path, h, err)
		}
		out = append(out, Change{Path: path, Data: []byte(data), Hash: f.Hash})
	}
	return out, nil
}
