package vcs

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// FirstParents is the history of tip along first parents, oldest first: the line of
// commits a branch was built by, as git log --first-parent --reverse shows it.
func (r *Git) FirstParents(tip plumbing.Hash) ([]plumbing.Hash, error) {
	var line []plumbing.Hash
	for h := tip; !h.IsZero(); {
		line = append(line, h)
		c, err := r.walkedCommit(h)
		if err != nil {
			return nil, fmt.Errorf("read commit %s: %w", h, err)
		}
		h = plumbing.ZeroHash
		if len(c.parents) > 0 {
			h = c.parents[0]
		}
	}
	slices.Reverse(line)
	return line, nil
}

// SignedPayload is a commit's signature as git keeps it (nil when it has none) and the
// bytes it signs: the commit as git encodes it without its signature.
func SignedPayload(c *object.Commit) (signature, payload []byte, err error) {
	payload, err = encodeCommit(c.EncodeWithoutSignature)
	if c.PGPSignature != "" {
		signature = []byte(c.PGPSignature)
	}
	return signature, payload, err
}

// PathChange is one path a commit changed against its first parent.
type PathChange struct {
	Path   string
	Action string        // "add", "change" or "delete"
	Blob   plumbing.Hash // the path's blob after the commit; before it, for a delete
}

// PathChanges are the paths a commit adds, changes or deletes against its first parent
// (all added for a root commit), sorted by path. A path no checkout could write (a name
// "..", ".git"), as a fetched branch may hold, is an error.
func (r *Git) PathChanges(c *object.Commit) ([]PathChange, error) {
	parent, err := r.parentTree(c)
	if err != nil {
		return nil, err
	}
	var out []PathChange
	err = r.eachChange("", parent, c.TreeHash, func(path, action string, _ uint32, blob plumbing.Hash) error {
		if err := checkPath(path); err != nil {
			return err
		}
		out = append(out, PathChange{Path: path, Action: action, Blob: blob})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("diff commit %s: %w", c.Hash, err)
	}
	slices.SortFunc(out, func(a, b PathChange) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// parentTree is the tree of c's first parent; zero (an empty tree) for a root commit.
func (r *Git) parentTree(c *object.Commit) (plumbing.Hash, error) {
	if len(c.ParentHashes) == 0 {
		return plumbing.ZeroHash, nil
	}
	p, err := r.Commit(c.ParentHashes[0])
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return p.TreeHash, nil
}

// eachChange calls fn with each file that tree new adds, changes or deletes against
// tree old (either zero: an empty one), under prefix: its path, "add", "change" or
// "delete", its mode as git reads it, and its blob (before it, for a delete); a
// directory added or deleted, each file it holds. The trees are walked side by side in
// git's order, into the directories that differ only: go-git's diff read each of a
// year's day directories, thousands of entries, whole at each commit. Modes are read as
// git reads them ("40755" a directory, "100664" a file of 0644): a tool's odd mode
// neither hides a change nor makes one. Paths are not checked: that is fn's.
func (r *Git) eachChange(prefix string, old, new plumbing.Hash, fn func(path, action string, mode uint32, blob plumbing.Hash) error) error {
	if old == new {
		return nil
	}
	before, err := r.loadDir(old)
	if err != nil {
		return err
	}
	after, err := r.loadDir(new)
	if err != nil {
		return err
	}
	// One side's entry alone: a file added or deleted, or all a directory holds.
	alone := func(d *dir, i int, action string) error {
		e := d.entry(i)
		switch {
		case !d.isDir(i):
			return fn(prefix+e.Name, action, d.mode(i), e.Hash)
		case action == "add":
			return r.eachChange(prefix+e.Name+"/", plumbing.ZeroHash, e.Hash, fn)
		}
		return r.eachChange(prefix+e.Name+"/", e.Hash, plumbing.ZeroHash, fn)
	}
	i, j := 0, 0
	for i < after.len() || j < before.len() {
		var order int // < 0: before's entry comes first; > 0: after's; 0: the same
		switch {
		case j == before.len():
			order = 1
		case i == after.len():
			order = -1
		default:
			order = gitCompare(before.name(j), before.isDir(j), after.name(i), after.isDir(i))
		}
		switch {
		case order > 0:
			err, i = alone(after, i, "add"), i+1
		case order < 0:
			err, j = alone(before, j, "delete"), j+1
		case before.mode(j) == after.mode(i) && bytes.Equal(before.objectID(j), after.objectID(i)):
			i, j = i+1, j+1 // the same entry: nothing is read of it
		default:
			is := after.entry(i)
			if after.isDir(i) {
				err = r.eachChange(prefix+is.Name+"/", before.entry(j).Hash, is.Hash, fn)
			} else {
				err = fn(prefix+is.Name, "change", after.mode(i), is.Hash)
			}
			i, j = i+1, j+1
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// StepsBack is how many first parents back from tip the commit to is, when it is
// within limit of them: a branch moved on since to, told without reading its whole
// history, as FirstParents would.
func (r *Git) StepsBack(tip, to plumbing.Hash, limit int) (int, bool) {
	for n, h := 0, tip; n <= limit && !h.IsZero(); n++ {
		if h == to {
			return n, true
		}
		c, err := r.walkedCommit(h)
		if err != nil || len(c.parents) == 0 {
			return 0, false
		}
		h = c.parents[0]
	}
	return 0, false
}

// Short is how agmem names a commit to a person: the first 12 hex digits of its id.
func Short(commit string) string { return commit[:min(len(commit), 12)] }

// IsAncestor says whether commit a is b or one of b's ancestors, through all parents.
func (r *Git) IsAncestor(a, b plumbing.Hash) (bool, error) {
	if a == b {
		return true, nil
	}
	ca, err := r.Commit(a)
	if err != nil {
		return false, err
	}
	cb, err := r.Commit(b)
	if err != nil {
		return false, err
	}
	return ca.IsAncestor(cb)
}
