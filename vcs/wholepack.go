package vcs

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
)

// WriteWholePack writes into w one pack of every object tip reaches (its commits, their
// trees and blobs), for a remote that has none of them: a branch pushed the first
// time. Each object a pack holds is copied as it is stored there, a delta still a delta
// when its base is sent before it, so that sending a year's history costs reading it:
// go-git's push looked for deltas anew among all of its objects, and took more than 400
// s and 4 GB for one that git pushes in under a minute. The others (loose objects, and
// deltas whose base is not sent) are written whole. An object no commit of tip's
// history reaches, which a rewrite left in a pack, is never sent.
func (r *Git) WriteWholePack(w io.Writer, tip plumbing.Hash) error {
	send, err := r.reachable(tip)
	if err != nil {
		return err
	}
	packs, err := r.packs.load(filepath.Join(r.gitDir, "objects", "pack"))
	if err != nil {
		return err
	}
	pw, err := r.newPackStream(w, len(send))
	if err != nil {
		return err
	}
	whole := func(h plumbing.Hash) error {
		o, err := r.wholeObject(h)
		if err != nil {
			return fmt.Errorf("object %s: %w", h, err)
		}
		return pw.add(h, o)
	}
	for _, p := range packs {
		entries, err := p.idx.entries()
		if err != nil {
			return fmt.Errorf("%s: %w", p.path, err)
		}
		if err := copyEntries(pw, p.path, entries, copyRule{want: func(h plumbing.Hash) bool { return send[h] }, whole: whole}); err != nil {
			return err
		}
	}
	for h := range send { // loose
		if _, ok := pw.at[h]; !ok {
			if err := whole(h); err != nil {
				return err
			}
		}
	}
	_, err = pw.end()
	return err
}

// reachable is the set of objects tip reaches: every commit of its history, and every
// tree and blob of theirs. A gitlink's commit is another repository's, and not in it.
func (r *Git) reachable(tip plumbing.Hash) (map[plumbing.Hash]bool, error) {
	seen := map[plumbing.Hash]bool{}
	var trees []plumbing.Hash
	for commits := []plumbing.Hash{tip}; len(commits) > 0; {
		h := commits[len(commits)-1]
		commits = commits[:len(commits)-1]
		if seen[h] {
			continue
		}
		seen[h] = true
		c, err := r.wholeObject(h)
		if err == nil && c.typ != plumbing.CommitObject {
			err = fmt.Errorf("a %s, not a commit", c.typ)
		}
		if err != nil {
			return nil, fmt.Errorf("read commit %s: %w", h, err)
		}
		tree, parents, err := commitLinks(c.data)
		if err != nil {
			return nil, fmt.Errorf("read commit %s: %w", h, err)
		}
		trees = append(trees, tree)
		commits = append(commits, parents...)
	}
	for len(trees) > 0 {
		h := trees[len(trees)-1]
		trees = trees[:len(trees)-1]
		if seen[h] {
			continue
		}
		seen[h] = true
		d, err := r.loadDir(h)
		if err != nil {
			return nil, err
		}
		for i := range d.len() {
			id := plumbing.Hash(d.objectID(i))
			switch {
			case d.isDir(i):
				trees = append(trees, id)
			case d.mode(i) != 0o160000:
				seen[id] = true
			}
		}
	}
	return seen, nil
}

// commitLinks reads a commit's tree and parents from its header.
func commitLinks(data []byte) (tree plumbing.Hash, parents []plumbing.Hash, err error) {
	header, _, _ := bytes.Cut(data, []byte("\n\n"))
	for _, line := range bytes.Split(header, []byte("\n")) {
		key, value, _ := bytes.Cut(line, []byte(" "))
		var h plumbing.Hash
		if string(key) == "tree" || string(key) == "parent" {
			if len(value) != 2*len(h) || !plumbing.IsHash(string(value)) {
				return tree, nil, fmt.Errorf("a %s line of %q", key, value)
			}
			h = plumbing.NewHash(string(value))
		}
		switch string(key) {
		case "tree":
			tree = h
		case "parent":
			parents = append(parents, h)
		}
	}
	if tree.IsZero() {
		return tree, nil, fmt.Errorf("no tree")
	}
	return tree, parents, nil
}
