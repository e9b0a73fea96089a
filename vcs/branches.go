package vcs

import (
	"fmt"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
)

// Branch is a local branch and the commit it points at.
type Branch struct {
	Name plumbing.ReferenceName
	Tip  plumbing.Hash
}

// Branches lists the local branches (loose or packed), sorted by name.
func (r *Git) Branches() ([]Branch, error) {
	refs, err := r.st.IterReferences()
	if err != nil {
		return nil, fmt.Errorf("read refs: %w", err)
	}
	var out []Branch
	err = refs.ForEach(func(ref *plumbing.Reference) error {
		if ref.Name().IsBranch() && ref.Type() == plumbing.HashReference {
			out = append(out, Branch{ref.Name(), ref.Hash()})
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}
