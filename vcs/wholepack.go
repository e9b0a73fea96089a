package vcs

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
)

// wholePack is the pack a push sends of a branch the remote lacks, planned: every
// object the branch's tip reaches, less what the remote holds, each found here.
type wholePack struct {
	r    *Git
	send map[plumbing.Hash]plumbing.ObjectType
}

// PlanWholePack plans the pack of every object tip reaches (its commits, their trees and
// blobs), less what each of haves (the remote's refs) that is a commit of tip's history
// reaches: the remote holds those. Its WriteTo writes it. It fails, before anything is sent, where an object
// is not in the repository (a shallow clone's history, a damaged one): a push that
// failed halfway through its pack left a local remote waiting for the rest.
func (r *Git) PlanWholePack(tip plumbing.Hash, haves []plumbing.Hash) (io.WriterTo, error) {
	send, err := r.reach([]plumbing.Hash{tip}, nil)
	if err != nil {
		return nil, err
	}
	var commits, trees []plumbing.Hash // of the remote's refs, that tip reaches
	for _, h := range haves {
		switch send[h] {
		case plumbing.CommitObject:
			commits = append(commits, h)
		case plumbing.TreeObject:
			trees = append(trees, h)
		case plumbing.BlobObject:
			delete(send, h)
		}
	}
	if len(commits)+len(trees) > 0 {
		held, err := r.reach(commits, trees)
		if err != nil {
			return nil, err
		}
		for o := range held {
			delete(send, o)
		}
	}
	for h, t := range send { // commits and trees were read; blobs are looked up
		if t != plumbing.BlobObject {
			continue
		}
		if p, _, err := r.findPacked(h); p == nil && !exists(r.loosePath(h)) {
			if err == nil {
				err = errors.New("not in the repository")
			}
			return nil, fmt.Errorf("object %s: %w", h, err)
		}
	}
	return &wholePack{r, send}, nil
}

// WriteTo writes the pack into w. Each object a pack holds is copied as it is stored
// there, a delta still a delta when its base is sent before it, so that sending a
// year's history costs reading it: go-git's push looked for deltas anew among all of
// its objects, and took more than 400 s and 4 GB for one that git pushes in under a
// minute. The others (loose objects, and deltas whose base is not sent) are written
// whole. An object no commit of the tip's history reaches, which a rewrite left in a
// pack, is never sent.
func (p *wholePack) WriteTo(w io.Writer) (int64, error) {
	r := p.r
	packs, err := r.packs.load(filepath.Join(r.gitDir, "objects", "pack"))
	if err != nil {
		return 0, err
	}
	pw, err := r.newPackStream(w, len(p.send))
	if err != nil {
		return 0, err
	}
	whole := func(h plumbing.Hash) error {
		o, err := r.wholeObject(h)
		if err != nil {
			return fmt.Errorf("object %s: %w", h, err)
		}
		return pw.add(h, o)
	}
	for _, pack := range packs {
		entries, err := pack.idx.entries()
		if err != nil {
			return pw.w.n, fmt.Errorf("%s: %w", pack.path, err)
		}
		if err := copyEntries(pw, pack.path, entries, copyRule{want: func(h plumbing.Hash) bool { _, ok := p.send[h]; return ok }, whole: whole}); err != nil {
			return pw.w.n, err
		}
	}
	for h := range p.send { // loose
		if _, ok := pw.at[h]; !ok {
			if err := whole(h); err != nil {
				return pw.w.n, err
			}
		}
	}
	sum, err := pw.end()
	return pw.w.n + int64(len(sum)), err
}

// reach is every object the commits and trees given reach, each with its type: every
// commit of their history, and every tree and blob of theirs. A gitlink's commit is
// another repository's, and not in it.
func (r *Git) reach(commits, trees []plumbing.Hash) (map[plumbing.Hash]plumbing.ObjectType, error) {
	seen := map[plumbing.Hash]plumbing.ObjectType{}
	for len(commits) > 0 {
		h := commits[len(commits)-1]
		commits = commits[:len(commits)-1]
		if _, ok := seen[h]; ok {
			continue
		}
		seen[h] = plumbing.CommitObject
		c, err := r.Commit(h)
		if err != nil {
			return nil, fmt.Errorf("read commit %s: %w", h, err)
		}
		trees = append(trees, c.TreeHash)
		commits = append(commits, c.ParentHashes...)
	}
	for len(trees) > 0 {
		h := trees[len(trees)-1]
		trees = trees[:len(trees)-1]
		if _, ok := seen[h]; ok {
			continue
		}
		seen[h] = plumbing.TreeObject
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
				seen[id] = plumbing.BlobObject
			}
		}
	}
	return seen, nil
}
