package vcs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// Branch is a local branch and the commit it points at.
type Branch struct {
	Name plumbing.ReferenceName
	Tip  plumbing.Hash
}

// Branches lists the local branches (loose or packed), sorted by name.
func (r *Git) Branches() ([]Branch, error) {
	refs, err := r.references()
	if err != nil {
		return nil, err
	}
	var out []Branch
	for _, ref := range refs {
		if ref.Name().IsBranch() && ref.Type() == plumbing.HashReference {
			out = append(out, Branch{ref.Name(), ref.Hash()})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// references are the repository's references. While git rewrites them (git gc packs
// the loose ones, as agmem gc and the daemon run it), go-git may read a file git has
// just made and not yet written, as an empty ref, or one it has just removed: those are
// read again, a few times, so that a reader meeting that moment waits rather than fails.
func (r *Git) references() ([]*plumbing.Reference, error) {
	for try := 1; ; try++ {
		var out []*plumbing.Reference
		refs, err := r.st.IterReferences()
		if err == nil {
			err = refs.ForEach(func(ref *plumbing.Reference) error {
				out = append(out, ref)
				return nil
			})
		}
		switch {
		case err == nil:
			return out, nil
		case try < refTries && (errors.Is(err, dotgit.ErrEmptyRefFile) || errors.Is(err, fs.ErrNotExist)):
			time.Sleep(refWait)
		default:
			return nil, fmt.Errorf("read refs: %w", err)
		}
	}
}

// refTries and refWait bound how long references waits for git to finish rewriting
// the refs: git gc packs a repo's few refs in milliseconds.
const (
	refTries = 20
	refWait  = 10 * time.Millisecond
)

// Replacements are what makes git read other objects than a commit's own, which go-git
// (and so agmem) does not follow: each refs/replace/ reference, by the object it
// replaces, and info/grafts when there is one. git show and git log answer from them.
func (r *Git) Replacements() ([]string, error) {
	refs, err := r.references()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ref := range refs {
		if name := ref.Name().String(); strings.HasPrefix(name, "refs/replace/") {
			out = append(out, name)
		}
	}
	if _, err := os.Stat(filepath.Join(r.gitDir, "info", "grafts")); err == nil {
		out = append(out, "info/grafts")
	}
	return out, nil
}
