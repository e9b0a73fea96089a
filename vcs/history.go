package vcs

import (
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/utils/merkletrie"
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
	Action string // "add", "change" or "delete"
}

// PathChanges are the paths a commit adds, changes or deletes against its first parent
// (all added for a root commit), sorted by path.
func (r *Git) PathChanges(c *object.Commit) ([]PathChange, error) {
	tree, err := c.Tree()
	if err != nil {
		return nil, err
	}
	var parent *object.Tree
	if len(c.ParentHashes) > 0 {
		if parent, err = r.Tree(c.ParentHashes[0]); err != nil {
			return nil, err
		}
	}
	changes, err := object.DiffTree(parent, tree)
	if err != nil {
		return nil, fmt.Errorf("diff commit %s: %w", c.Hash, err)
	}
	out := make([]PathChange, 0, len(changes))
	for _, ch := range changes {
		action, err := ch.Action()
		if err != nil {
			return nil, err
		}
		pc := PathChange{Path: ch.To.Name, Action: "change"}
		switch action {
		case merkletrie.Insert:
			pc.Action = "add"
		case merkletrie.Delete:
			pc.Path, pc.Action = ch.From.Name, "delete"
		}
		out = append(out, pc)
	}
	slices.SortFunc(out, func(a, b PathChange) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
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
