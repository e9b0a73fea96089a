package vcs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/agmem/agmem/failpoint"
)

// ErrRefMoved is returned when the branch no longer points at the commit a new commit
// was built on: someone else committed meanwhile. Build again on the new tip.
var ErrRefMoved = errors.New("branch moved while committing")

// ErrRefLocked is returned when git's lock file for the branch stays taken.
var ErrRefLocked = errors.New("branch is locked by another git process")

// Draft is a commit being assembled on top of a branch tip. Files are added to it one by
// one; Exists lets the caller choose paths that nothing in the tree holds yet.
type Draft struct {
	r       *Repo
	parent  plumbing.Hash
	tree    *treeEditor
	changes []Change
}

// NewDraft starts a commit whose parent is tip (the zero hash for a first commit).
func (r *Repo) NewDraft(tip plumbing.Hash) (*Draft, error) {
	base := plumbing.ZeroHash
	if !tip.IsZero() {
		c, err := r.Commit(tip)
		if err != nil {
			return nil, fmt.Errorf("read tip %s: %w", tip, err)
		}
		base = c.TreeHash
	}
	te, err := newTreeEditor(r.st, base)
	if err != nil {
		return nil, err
	}
	return &Draft{r: r, parent: tip, tree: te}, nil
}

// Exists reports whether the tree (with what was added so far) holds path.
func (d *Draft) Exists(path string) (bool, error) { return d.tree.Exists(path) }

// Put writes data as a blob and places it at path, replacing a file already there.
func (d *Draft) Put(path string, data []byte) error {
	h, err := d.r.writeBlob(data)
	if err != nil {
		return fmt.Errorf("write blob for %s: %w", path, err)
	}
	if err := d.tree.Put(path, h); err != nil {
		return err
	}
	d.changes = append(d.changes, Change{Path: path, Data: data, hash: h})
	return nil
}

// Changes are the files put so far, for Materialize once the commit is on the branch.
func (d *Draft) Changes() []Change { return d.changes }

// Commit writes the trees and the commit, then moves branch from the draft's parent to
// the new commit. ErrRefMoved means the branch moved first; nothing is lost, and the
// objects written stay unreferenced until git gc.
func (d *Draft) Commit(branch plumbing.ReferenceName, message string, when time.Time) (plumbing.Hash, error) {
	root, err := d.tree.Write()
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write tree: %w", err)
	}
	sig := d.r.signature()
	sig.When = when
	c := &object.Commit{Author: sig, Committer: sig, Message: message, TreeHash: root}
	if !d.parent.IsZero() {
		c.ParentHashes = []plumbing.Hash{d.parent}
	}
	obj := d.r.st.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("encode commit: %w", err)
	}
	h, err := d.r.st.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write commit: %w", err)
	}
	failpoint.Hit("commit-before-ref")
	if err := d.r.moveBranch(branch, d.parent, h); err != nil {
		return plumbing.ZeroHash, err
	}
	return h, nil
}

func (r *Repo) writeBlob(data []byte) (plumbing.Hash, error) {
	obj := r.st.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	obj.SetSize(int64(len(data)))
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(data); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return r.st.SetEncodedObject(obj)
}

// staleRefLock is the age past which a branch lock file is taken to be left behind by a
// killed process: git holds it for milliseconds.
const staleRefLock = 30 * time.Second

// moveBranch is a compare-and-swap on the branch, done as git does it: take
// <ref>.lock with O_EXCL, check the current value (loose or packed), write the new
// value into the lock file and rename it over the ref.
func (r *Repo) moveBranch(branch plumbing.ReferenceName, old, new plumbing.Hash) error {
	refPath := filepath.Join(r.gitDir, filepath.FromSlash(branch.String()))
	lockPath := refPath + ".lock"
	if err := os.MkdirAll(filepath.Dir(refPath), 0o755); err != nil {
		return err
	}
	var f *os.File
	for attempt := 0; ; attempt++ {
		var err error
		f, err = os.OpenFile(lockPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("lock %s: %w", branch, err)
		}
		if fi, serr := os.Stat(lockPath); serr == nil && time.Since(fi.ModTime()) > staleRefLock {
			os.Remove(lockPath)
			continue
		}
		if attempt == 100 {
			return fmt.Errorf("%w: %s exists", ErrRefLocked, lockPath)
		}
		time.Sleep(20 * time.Millisecond)
	}
	committed := false
	defer func() {
		if !committed {
			f.Close()
			os.Remove(lockPath)
		}
	}()
	current, err := r.Tip(branch)
	if err != nil {
		return err
	}
	if current != old {
		return ErrRefMoved
	}
	if _, err := f.WriteString(new.String() + "\n"); err != nil {
		return fmt.Errorf("write %s: %w", lockPath, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", lockPath, err)
	}
	if err := os.Rename(lockPath, refPath); err != nil {
		return fmt.Errorf("move %s: %w", branch, err)
	}
	committed = true
	return nil
}

// FindBatch looks for the commit that recorded batch: a commit between tip and base
// (base excluded, and not looked past) whose trailer block says Agmem-Batch: batch and
// whose tree holds recordPath. Both must agree, so a trailer typed into a message by
// hand is not enough. If base is not in tip's history, the whole history is searched.
func (r *Repo) FindBatch(tip, base plumbing.Hash, batch, recordPath string) (plumbing.Hash, bool, error) {
	if tip.IsZero() {
		return plumbing.ZeroHash, false, nil
	}
	seen := map[plumbing.Hash]bool{base: true}
	queue := []plumbing.Hash{tip}
	for len(queue) > 0 {
		h := queue[0]
		queue = queue[1:]
		if seen[h] {
			continue
		}
		seen[h] = true
		c, err := r.Commit(h)
		if err != nil {
			return plumbing.ZeroHash, false, fmt.Errorf("read commit %s: %w", h, err)
		}
		if TrailerValue(ParseTrailers(c.Message), TrailerBatch) == batch {
			if _, err := c.File(recordPath); err == nil {
				return h, true, nil
			}
		}
		queue = append(queue, c.ParentHashes...)
	}
	return plumbing.ZeroHash, false, nil
}

// AddedFiles are the files a commit adds or changes against its first parent, read
// back from git: what Materialize needs when the commit was written by a process that
// died before it could update the worktree.
func (r *Repo) AddedFiles(commit plumbing.Hash) ([]Change, error) {
	c, err := r.Commit(commit)
	if err != nil {
		return nil, err
	}
	parentTree := plumbing.ZeroHash
	if len(c.ParentHashes) > 0 {
		p, err := r.Commit(c.ParentHashes[0])
		if err != nil {
			return nil, err
		}
		parentTree = p.TreeHash
	}
	var out []Change
	err = r.diffTrees("", parentTree, c.TreeHash, &out)
	return out, err
}

func (r *Repo) diffTrees(prefix string, old, new plumbing.Hash, out *[]Change) error {
	if old == new {
		return nil
	}
	before, err := loadDir(r.st, old)
	if err != nil {
		return err
	}
	after, err := loadDir(r.st, new)
	if err != nil {
		return err
	}
	for name, e := range after.entries {
		was, existed := before.entries[name]
		if existed && was.Hash == e.Hash {
			continue
		}
		path := prefix + name
		switch {
		case e.Mode == filemode.Dir:
			oldSub := plumbing.ZeroHash
			if existed && was.Mode == filemode.Dir {
				oldSub = was.Hash
			}
			if err := r.diffTrees(path+"/", oldSub, e.Hash, out); err != nil {
				return err
			}
		case e.Mode.IsFile():
			blob, err := object.GetBlob(r.st, e.Hash)
			if err != nil {
				return fmt.Errorf("read %s: %w", path, err)
			}
			rd, err := blob.Reader()
			if err != nil {
				return err
			}
			var buf bytes.Buffer
			_, err = buf.ReadFrom(rd)
			rd.Close()
			if err != nil {
				return err
			}
			*out = append(*out, Change{Path: path, Data: buf.Bytes(), hash: e.Hash})
		}
	}
	return nil
}
