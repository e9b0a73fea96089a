package vcs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/agmem/agmem/internal/hint"
)

// ErrDetached is returned when HEAD names a commit rather than a branch.
var ErrDetached = hint.NewCause("HEAD is detached",
	`check the memory repo's branch out again (e.g. "git switch main"): agmem commits only to a branch, and nothing recorded is lost`)

// Git is a memory repo's git side: a worktree with a .git directory.
//
// It uses go-git's storage directly rather than its porcelain: a commit is written by
// plumbing, rebuilding only the trees on changed paths (commit.go), and nothing runs the
// porcelain's worktree status, whose cost grows with the repo. Remotes are package
// vcs/transport's.
type Git struct {
	Root     string // the worktree
	gitDir   string
	st       objectStore
	trees    treeCache
	packs    packIndexes
	unpacked unpacked
	walked   sync.Map    // commit id: walkedCommit
	packDir  time.Time   // when .git/objects/pack last changed, as Refresh last saw it
	opened   os.FileInfo // the .git directory opened (Replaced)
	goGit    sync.Mutex  // go-git's storage, read one object at a time (goGitObject)
}

// smallObjects is go-git's object cache, keeping only objects of at most
// maxCachedObject bytes. go-git hashes each object it caches, each version of a big tree
// that it builds while resolving a chain of deltas included: that hashing cost more than
// the reading it might save, and agmem keeps the trees it reads parsed (treeCache).
type smallObjects struct{ cache.Object }

const maxCachedObject = 256 << 10

func (c smallObjects) Put(o plumbing.EncodedObject) {
	if o.Size() <= maxCachedObject {
		c.Object.Put(o)
	}
}

// Open opens the git repository whose worktree is root.
func Open(root string) (*Git, error) {
	gitDir := filepath.Join(root, ".git")
	fi, err := os.Stat(gitDir)
	if err == nil && fi.Mode().IsRegular() {
		return nil, hint.With(fmt.Errorf("%s has a .git file, not a directory (a linked worktree, a submodule or a separate git dir), which agmem does not support yet", root),
			"make the memory repo in a repository's main worktree, or in a directory of its own")
	} else if err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%s has no .git directory", root)
	}
	st := filesystem.NewStorage(osfs.New(gitDir), smallObjects{cache.NewObjectLRUDefault()})
	if _, err := st.Reference(plumbing.HEAD); err != nil {
		return nil, fmt.Errorf("open git repo %s: %w", root, err)
	}
	r := &Git{Root: root, gitDir: gitDir, trees: treeCache{max: maxCachedTreeBytes},
		unpacked: unpacked{max: maxUnpackedBytes}, opened: fi}
	r.st = objectStore{st, r}
	return r, nil
}

// Replaced says whether the .git directory at Root is no longer the one opened: deleted,
// or made anew (the memory repo deleted and initialised again). What r read and holds
// open is of the repo before; a reader that lives on opens the repo again.
func (r *Git) Replaced() bool {
	fi, err := os.Stat(r.gitDir)
	return err != nil || !os.SameFile(fi, r.opened)
}

// Init makes root a git repository on branch main, unless it is one already, and
// returns the repo.
func Init(root string) (r *Git, created bool, err error) {
	gitDir := filepath.Join(root, ".git")
	if _, err := os.Stat(gitDir); err == nil {
		r, err := Open(root)
		return r, false, err
	}
	st := filesystem.NewStorage(osfs.New(gitDir), smallObjects{cache.NewObjectLRUDefault()})
	if err := st.Init(); err != nil {
		return nil, false, fmt.Errorf("git init %s: %w", root, err)
	}
	cfg := config.NewConfig()
	cfg.Core.IsBare = false
	cfg.Raw.Section("pack").SetOption("depth", packDepth) // for git's own gc too
	if err := st.SetConfig(cfg); err != nil {
		return nil, false, fmt.Errorf("git init %s: %w", root, err)
	}
	head := plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName("main"))
	if err := st.SetReference(head); err != nil {
		return nil, false, fmt.Errorf("git init %s: %w", root, err)
	}
	r, err = Open(root)
	return r, true, err
}

// Branch is the branch HEAD points at; it need not have a commit yet.
func (r *Git) Branch() (plumbing.ReferenceName, error) {
	head, err := r.st.Reference(plumbing.HEAD)
	if err != nil {
		return "", fmt.Errorf("read HEAD: %w", err)
	}
	if head.Type() != plumbing.SymbolicReference || !head.Target().IsBranch() {
		return "", ErrDetached
	}
	return head.Target(), nil
}

// Tip is the commit the branch points at, or the zero hash for a branch with no commit.
func (r *Git) Tip(branch plumbing.ReferenceName) (plumbing.Hash, error) {
	ref, err := r.st.Reference(branch)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read %s: %w", branch, err)
	}
	return ref.Hash(), nil
}

// Head is the branch HEAD points at and its tip (the zero hash before a first commit).
func (r *Git) Head() (plumbing.ReferenceName, plumbing.Hash, error) {
	branch, err := r.Branch()
	if err != nil {
		return "", plumbing.ZeroHash, err
	}
	tip, err := r.Tip(branch)
	return branch, tip, err
}

// Refresh takes in the packs other processes wrote or removed since this one last
// looked (a flush by the daemon, git gc): a long-lived reader calls it before it reads.
func (r *Git) Refresh() {
	fi, err := os.Stat(filepath.Join(r.gitDir, "objects", "pack"))
	if err != nil || fi.ModTime().Equal(r.packDir) {
		return
	}
	r.packDir = fi.ModTime()
	r.reindex()
}

// reindex has go-git and openBlob read the pack indexes again: packs were added or
// removed.
func (r *Git) reindex() {
	r.goGit.Lock()
	r.st.Reindex()
	r.goGit.Unlock()
	r.packs.forget()
}

// Commit reads a commit object.
func (r *Git) Commit(h plumbing.Hash) (*object.Commit, error) {
	return object.GetCommit(r.st, h)
}

// signature is who agmem's commits are by: the git identity configured for this repo
// or this user, as git would pick it, else agmem itself.
func (r *Git) signature() object.Signature {
	return r.identityFrom("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL")
}

// committer is who commits them: GIT_COMMITTER_NAME and _EMAIL where set, as in git.
func (r *Git) committer() object.Signature {
	return r.identityFrom("GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL")
}

// CommitterIdent is who commits agmem's commits, as "Name <email>".
func (r *Git) CommitterIdent() string {
	c := r.committer()
	return c.Name + " <" + c.Email + ">"
}

func (r *Git) identityFrom(nameVar, emailVar string) object.Signature {
	name, email := os.Getenv(nameVar), os.Getenv(emailVar)
	for _, scope := range []func() (*config.Config, error){
		func() (*config.Config, error) { return r.st.Config() },
		func() (*config.Config, error) { return config.LoadConfig(config.GlobalScope) },
	} {
		if name != "" && email != "" {
			break
		}
		if c, err := scope(); err == nil {
			if name == "" {
				name = c.User.Name
			}
			if email == "" {
				email = c.User.Email
			}
		}
	}
	if name = identity(name); name == "" {
		name = "agmem"
	}
	if email = identity(email); email == "" {
		email = "agmem@localhost"
	}
	return object.Signature{Name: name, Email: email}
}

// identity drops what git's fsck refuses in a name or an address.
func identity(s string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if r == '<' || r == '>' || r == '\n' || r == '\r' || r == 0 {
			return -1
		}
		return r
	}, s))
}

// FileAt is the content of path in commit h, or nil when h is zero or lacks the file.
func (r *Git) FileAt(h plumbing.Hash, path string) ([]byte, error) {
	if h.IsZero() {
		return nil, nil
	}
	c, err := r.Commit(h)
	if err != nil {
		return nil, err
	}
	f, err := c.File(path)
	if errors.Is(err, object.ErrFileNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s, err := f.Contents()
	return []byte(s), err
}

// File is a file read from a commit.
type File struct {
	Path string
	Data []byte
}

// ListDir names the subdirectories of dir in commit h (none if h is zero or dir missing).
func (r *Git) ListDir(h plumbing.Hash, dir string) ([]string, error) {
	d, err := r.dirAt(h, dir)
	if d == nil || err != nil {
		return nil, err
	}
	var out []string
	for i := range d.len() {
		if d.isDir(i) {
			out = append(out, string(d.name(i)))
		}
	}
	return out, nil
}

// ListFiles gives the paths of the files directly inside dir in commit h, reading no
// file.
func (r *Git) ListFiles(h plumbing.Hash, dir string) ([]string, error) {
	files, err := r.FilesIn(h, dir)
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.Path
	}
	return paths, err
}

// TreeFile is a file a tree holds: its path and its blob.
type TreeFile struct {
	Path string
	Blob plumbing.Hash
}

// FilesIn lists the files (and links) directly inside dir in commit h, with their
// blobs, reading no file; none if h is zero or dir missing.
func (r *Git) FilesIn(h plumbing.Hash, dir string) ([]TreeFile, error) {
	d, err := r.dirAt(h, dir)
	if d == nil || err != nil {
		return nil, err
	}
	var out []TreeFile
	for i := range d.len() {
		if m := d.mode(i); m == 0o100644 || m == 0o100755 || m == 0o120000 {
			out = append(out, TreeFile{dir + "/" + string(d.name(i)), plumbing.Hash(d.objectID(i))})
		}
	}
	return out, nil
}

// dirAt is the directory at path in commit h; nil if h is zero or the commit holds no
// such directory. Its trees are read as a flush reads them (loadDir), not decoded by
// go-git: a check of a year's session records spent most of its reading in go-git's
// walks to them.
func (r *Git) dirAt(h plumbing.Hash, path string) (*dir, error) {
	if h.IsZero() {
		return nil, nil
	}
	c, err := r.Commit(h)
	if err != nil {
		return nil, err
	}
	d, err := r.loadDir(c.TreeHash)
	if err != nil {
		return nil, err
	}
	for _, name := range strings.Split(path, "/") {
		i := d.search(name, true)
		if i == d.len() || string(d.name(i)) != name || !d.isDir(i) {
			return nil, nil
		}
		if d, err = r.loadDir(plumbing.Hash(d.objectID(i))); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// EachFile calls fn with a reader of each file directly inside dir in commit h. A blob
// is inflated only as far as fn reads it.
func (r *Git) EachFile(h plumbing.Hash, dir string, fn func(path string, rd io.Reader) error) error {
	t, err := r.treeAt(h, dir)
	if t == nil || err != nil {
		return err
	}
	for _, e := range t.Entries {
		if !e.Mode.IsFile() {
			continue
		}
		rd, err := r.openBlob(e.Hash)
		if err != nil {
			return err
		}
		err = fn(dir+"/"+e.Name, rd)
		rd.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// Tree is the root tree of commit h.
func (r *Git) Tree(h plumbing.Hash) (*object.Tree, error) {
	c, err := r.Commit(h)
	if err != nil {
		return nil, err
	}
	return c.Tree()
}

func (r *Git) treeAt(h plumbing.Hash, dir string) (*object.Tree, error) {
	if h.IsZero() {
		return nil, nil
	}
	root, err := r.Tree(h)
	if err != nil {
		return nil, err
	}
	t, err := root.Tree(dir)
	if errors.Is(err, object.ErrDirectoryNotFound) {
		return nil, nil
	}
	return t, err
}
