package vcs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/agmem/agmem/internal/failpoint"
)

// ErrRefMoved is returned when the branch no longer points at the commit a new commit
// was built on: someone else committed meanwhile. Build again on the new tip.
var ErrRefMoved = errors.New("branch moved while committing")

// ErrRefLocked is returned when git's lock file for the branch stays taken.
var ErrRefLocked = errors.New("branch is locked by another git process")

// Draft is one or more commits being assembled on top of a branch tip. Files are put
// into it one by one (Exists lets the caller choose paths nothing holds yet); Seal makes
// a commit of what was put since the last one; Publish stores every object the draft
// made as one pack and moves the branch to the last commit.
//
// Objects wait in memory until Publish: a flush of ten thousand files writes one pack
// file instead of ten thousand loose objects, and a draft abandoned before Publish
// leaves nothing behind in the repository.
type Draft struct {
	r       *Git
	base    plumbing.Hash // the tip the draft was started on
	head    plumbing.Hash // the last commit sealed, or base
	subject string        // the last commit's subject, for the reflog
	tree    *treeEditor
	staged  *stage
	changes []Change
	signer  Signer
}

// Signer signs commits: given a commit as git encodes it without a signature, it gives
// the armored signature git keeps in the commit's gpgsig header, or nothing, for a
// commit left unsigned.
type Signer interface {
	Sign(payload []byte) ([]byte, error)
}

// stage holds a draft's new objects, in the order they were made.
type stage struct {
	objects map[plumbing.Hash]stagedObject
	order   []plumbing.Hash
}

// stagedObject is a new object's content, or a delta against an object staged before it.
type stagedObject struct {
	typ  plumbing.ObjectType
	data []byte
	base plumbing.Hash // set when data is a delta
}

// add stages the object h, unless it is staged already.
func (s *stage) add(h plumbing.Hash, o stagedObject) {
	if _, ok := s.objects[h]; !ok {
		s.objects[h] = o
		s.order = append(s.order, h)
	}
}

// put stages data as a whole object of type t and returns its id.
func (s *stage) put(t plumbing.ObjectType, data []byte) plumbing.Hash {
	h := plumbing.ComputeHash(t, data)
	s.add(h, stagedObject{typ: t, data: data})
	return h
}

func (s *stage) object(h plumbing.Hash) (stagedObject, error) { return s.objects[h], nil }

// NewDraft starts a draft on tip (the zero hash for a first commit).
func (r *Git) NewDraft(tip plumbing.Hash) (*Draft, error) {
	baseTree := plumbing.ZeroHash
	if !tip.IsZero() {
		c, err := r.Commit(tip)
		if err != nil {
			return nil, fmt.Errorf("read tip %s: %w", tip, err)
		}
		baseTree = c.TreeHash
	}
	st := &stage{objects: map[plumbing.Hash]stagedObject{}}
	te, err := newTreeEditor(r, st, baseTree)
	if err != nil {
		return nil, err
	}
	return &Draft{r: r, base: tip, head: tip, tree: te, staged: st}, nil
}

// SignWith makes every commit sealed from now on signed by s.
func (d *Draft) SignWith(s Signer) { d.signer = s }

// Exists reports whether the tree (with what was put so far) holds path.
func (d *Draft) Exists(path string) (bool, error) { return d.tree.Exists(path) }

// Put places data at path, replacing a file already there.
func (d *Draft) Put(path string, data []byte) error {
	h := d.staged.put(plumbing.BlobObject, data)
	if err := d.tree.Put(path, h); err != nil {
		return err
	}
	d.changes = append(d.changes, Change{Path: path, Data: data, Hash: h})
	return nil
}

// Changes are the files put so far, for Materialize once the commits are on the branch.
func (d *Draft) Changes() []Change { return d.changes }

// Seal makes a commit of everything put since the last Seal, on top of the last commit,
// and returns its hash. The commit reaches the repository with Publish.
func (d *Draft) Seal(message string, when time.Time) (plumbing.Hash, error) {
	root := d.tree.Write()
	author, committer := d.r.signature(), d.r.committer()
	author.When, committer.When = when, when
	c := &object.Commit{Author: author, Committer: committer, Message: message, TreeHash: root}
	if !d.head.IsZero() {
		c.ParentHashes = []plumbing.Hash{d.head}
	}
	if d.signer != nil {
		unsigned, err := encodeCommit(c.EncodeWithoutSignature)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		sig, err := d.signer.Sign(unsigned)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("sign commit: %w", err)
		}
		c.PGPSignature = string(sig)
	}
	encoded, err := encodeCommit(c.Encode)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	d.head = d.staged.put(plumbing.CommitObject, encoded)
	d.subject, _, _ = strings.Cut(message, "\n")
	return d.head, nil
}

// encodeCommit is a commit's bytes as encode writes them.
func encodeCommit(encode func(plumbing.EncodedObject) error) ([]byte, error) {
	var obj plumbing.MemoryObject
	if err := encode(&obj); err != nil {
		return nil, fmt.Errorf("encode commit: %w", err)
	}
	rd, err := obj.Reader()
	if err != nil {
		return nil, fmt.Errorf("encode commit: %w", err)
	}
	var encoded bytes.Buffer
	if _, err := encoded.ReadFrom(rd); err != nil {
		return nil, fmt.Errorf("encode commit: %w", err)
	}
	return encoded.Bytes(), nil
}

// Publish writes the draft's objects into the repository as one pack, then moves
// branch from the tip the draft started on to its last commit. ErrRefMoved means the
// branch moved first: nothing is lost, and the pack's objects stay unreferenced until
// git gc.
func (d *Draft) Publish(branch plumbing.ReferenceName) error {
	if d.head == d.base {
		return errors.New("publish: nothing was sealed")
	}
	// moveBranch checks again under the lock; this saves writing a pack in vain.
	if tip, err := d.r.Tip(branch); err != nil {
		return err
	} else if tip != d.base {
		return ErrRefMoved
	}
	if _, err := d.r.writePack(d.staged.order, d.staged.object); err != nil {
		return err
	}
	failpoint.Hit("commit-before-ref")
	// The reflog says what moved the branch, as git's own commands do.
	return d.r.moveBranch(branch, d.base, d.head, "agmem: "+d.subject)
}

// Commit seals what was put as one commit and publishes it.
func (d *Draft) Commit(branch plumbing.ReferenceName, message string, when time.Time) (plumbing.Hash, error) {
	h, err := d.Seal(message, when)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return h, d.Publish(branch)
}

// moveBranch is a compare-and-swap on the branch, done as git does it: take
// <ref>.lock, check the current value (loose or packed), write the new value into the
// lock file and rename it over the ref.
func (r *Git) moveBranch(branch plumbing.ReferenceName, old, new plumbing.Hash, why string) error {
	refPath := filepath.Join(r.gitDir, filepath.FromSlash(branch.String()))
	if err := os.MkdirAll(filepath.Dir(refPath), 0o755); err != nil {
		return err
	}
	lock, err := r.takeLock(refPath)
	if errors.Is(err, errLockHeld) {
		return fmt.Errorf("%w: %v", ErrRefLocked, err)
	}
	if err != nil {
		return err
	}
	defer lock.abort()
	current, err := r.Tip(branch)
	if err != nil {
		return err
	}
	if current != old {
		return ErrRefMoved
	}
	if _, err := lock.WriteString(new.String() + "\n"); err != nil {
		return fmt.Errorf("write %s: %w", branch, err)
	}
	if err := lock.commit(true); err != nil {
		return fmt.Errorf("move %s: %w", branch, err)
	}
	return r.appendReflog(branch, old, new, why)
}

// appendReflog notes a branch move in the branch's reflog and HEAD's, as git does in a
// repository with a worktree (core.logAllRefUpdates), so that git reflog and @{1} work.
func (r *Git) appendReflog(branch plumbing.ReferenceName, old, new plumbing.Hash, why string) error {
	sig := r.committer()
	_, offset := time.Now().Zone()
	sign := '+'
	if offset < 0 {
		sign, offset = '-', -offset
	}
	line := fmt.Sprintf("%s %s %s <%s> %d %c%02d%02d\t%s\n", old, new, sig.Name, sig.Email,
		time.Now().Unix(), sign, offset/3600, offset%3600/60, OneLine(why))
	for _, name := range []string{branch.String(), "HEAD"} {
		path := filepath.Join(r.gitDir, "logs", filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		_, err = f.WriteString(line)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("reflog %s: %w", name, err)
		}
	}
	return nil
}

// FindBatch looks for the commit that recorded batch: a commit between tip and base
// (base excluded, and not looked past) whose trailer block says Agmem-Batch: batch and
// whose tree holds one of recordPaths. Both must agree, so a trailer typed into a message by
// hand is not enough. If base is not in tip's history, the whole history is searched.
func (r *Git) FindBatch(tip, base plumbing.Hash, batch string, recordPaths []string) (plumbing.Hash, bool, error) {
	var found plumbing.Hash
	err := r.WalkBatches(tip, func(h plumbing.Hash, b string) (bool, error) {
		if h == base {
			return false, nil
		}
		if b == batch {
			commit, err := r.Commit(h)
			if err != nil {
				return false, fmt.Errorf("read commit %s: %w", h, err)
			}
			for _, p := range recordPaths {
				if _, err := commit.File(p); err == nil {
					found = h
					return false, errFound
				}
			}
		}
		return true, nil
	})
	if errors.Is(err, errFound) {
		return found, true, nil
	}
	return plumbing.ZeroHash, false, err
}

var errFound = errors.New("found")

// Holds says whether the history of tip holds commit: tip itself or one of its
// ancestors. It walks tip's history breadth first until it meets commit, so that a
// commit a few before tip is found in a few reads, or ctx is done.
func (r *Git) Holds(ctx context.Context, tip, commit plumbing.Hash) (bool, error) {
	err := r.WalkBatches(tip, func(h plumbing.Hash, _ string) (bool, error) {
		if h == commit {
			return false, errFound
		}
		return true, ctx.Err()
	})
	if errors.Is(err, errFound) {
		return true, nil
	}
	return false, err
}

// WalkBatches visits each commit reachable from tip once, breadth first from it, with
// its Agmem-Batch trailer ("" for a commit agmem did not write); visit says whether to
// go on to the commit's parents, and an error from it ends the walk.
func (r *Git) WalkBatches(tip plumbing.Hash, visit func(h plumbing.Hash, batch string) (bool, error)) error {
	if tip.IsZero() {
		return nil
	}
	seen := map[plumbing.Hash]bool{}
	queue := []plumbing.Hash{tip}
	for len(queue) > 0 {
		h := queue[0]
		queue = queue[1:]
		if seen[h] {
			continue
		}
		seen[h] = true
		c, err := r.walkedCommit(h)
		if err != nil {
			return fmt.Errorf("read commit %s: %w", h, err)
		}
		descend, err := visit(h, c.batch)
		if err != nil {
			return err
		}
		if descend {
			queue = append(queue, c.parents...)
		}
	}
	return nil
}

// walkedCommit is what WalkBatches reads of a commit: its Agmem-Batch trailer and its
// parents. A flush looks for several batches from one tip: each commit is read once.
type walkedCommit struct {
	batch   string
	parents []plumbing.Hash
}

func (r *Git) walkedCommit(h plumbing.Hash) (walkedCommit, error) {
	if c, ok := r.walked.Load(h); ok {
		return c.(walkedCommit), nil
	}
	c, err := r.Commit(h)
	if err != nil {
		return walkedCommit{}, err
	}
	w := walkedCommit{batch: TrailerValue(ParseTrailers(c.Message), TrailerBatch), parents: c.ParentHashes}
	r.walked.Store(h, w)
	return w, nil
}

// AddedFiles are the files a commit adds or changes against its first parent, read
// back from git: what Materialize needs when the commit was written by a process that
// died before it could update the worktree.
func (r *Git) AddedFiles(commit plumbing.Hash) ([]Change, error) {
	return r.addedFiles(commit, func(string) bool { return true })
}

// AddedPaths are the files a commit adds or changes against its first parent, by path,
// with the contents of those read says to read (Data nil for the others). Neither it nor
// AddedFiles gives a path that checkPath refuses.
func (r *Git) AddedPaths(commit plumbing.Hash, read func(path string) bool) ([]Change, error) {
	return r.addedFiles(commit, read)
}

func (r *Git) addedFiles(commit plumbing.Hash, read func(path string) bool) ([]Change, error) {
	c, err := r.Commit(commit)
	if err != nil {
		return nil, err
	}
	parent, err := r.parentTree(c)
	if err != nil {
		return nil, err
	}
	var out []Change
	err = r.eachChange("", parent, c.TreeHash, func(path, action string, mode uint32, blob plumbing.Hash) error {
		switch {
		case action == "delete", mode == uint32(filemode.Submodule), checkPath(path) != nil:
			// A gitlink holds no file; a name no checkout could write ("..", ".git") is
			// one a fetched branch may hold.
		case !read(path):
			out = append(out, Change{Path: path, Hash: blob})
		default:
			data, err := r.ReadBlob(blob)
			if err != nil {
				return fmt.Errorf("read %s: %w", path, err)
			}
			out = append(out, Change{Path: path, Data: data, Hash: blob})
		}
		return nil
	})
	return out, err
}
