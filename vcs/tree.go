package vcs

import (
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage"
)

// A Change is a file to add to (or replace in) the tree, and to write into the worktree.
type Change struct {
	Path string // slash-separated, relative to the repo root
	Data []byte
	hash plumbing.Hash
}

// dir is one directory of the tree being edited. Only directories on changed paths are
// ever loaded, so an edit costs in proportion to its changes, not to the repo.
type dir struct {
	entries map[string]object.TreeEntry
	subdirs map[string]*dir // loaded (and possibly changed) subdirectories
	changed bool
}

// treeEditor edits the tree of a commit by adding files. It reads existing trees from
// the repository and writes new ones to out, the draft's staging area.
type treeEditor struct {
	st   storage.Storer
	out  storer.EncodedObjectStorer
	root *dir
}

func newTreeEditor(st storage.Storer, out storer.EncodedObjectStorer, base plumbing.Hash) (*treeEditor, error) {
	root, err := loadDir(st, base)
	if err != nil {
		return nil, err
	}
	return &treeEditor{st: st, out: out, root: root}, nil
}

func loadDir(st storage.Storer, h plumbing.Hash) (*dir, error) {
	d := &dir{entries: map[string]object.TreeEntry{}, subdirs: map[string]*dir{}}
	if h.IsZero() {
		return d, nil
	}
	t, err := object.GetTree(st, h)
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", h, err)
	}
	for _, e := range t.Entries {
		d.entries[e.Name] = e
	}
	return d, nil
}

// walk returns the directory holding path's last component, loading (and, with create,
// making) the directories on the way. It returns nil when a directory is missing and
// create is false.
func (te *treeEditor) walk(path string, create bool) (*dir, string, error) {
	parts := strings.Split(path, "/")
	d := te.root
	for _, name := range parts[:len(parts)-1] {
		sub, ok := d.subdirs[name]
		if !ok {
			e, exists := d.entries[name]
			switch {
			case exists && e.Mode != filemode.Dir:
				return nil, "", fmt.Errorf("%s: %s is a file, not a directory", path, name)
			case !exists && !create:
				return nil, "", nil
			}
			var err error
			if sub, err = loadDir(te.st, e.Hash); err != nil {
				return nil, "", err
			}
			d.subdirs[name] = sub
		}
		d = sub
	}
	return d, parts[len(parts)-1], nil
}

// Exists reports whether the tree holds anything at path.
func (te *treeEditor) Exists(path string) (bool, error) {
	d, name, err := te.walk(path, false)
	if d == nil || err != nil {
		return false, err
	}
	_, ok := d.entries[name]
	if !ok {
		_, ok = d.subdirs[name]
	}
	return ok, nil
}

// Put places a blob at path.
func (te *treeEditor) Put(path string, blob plumbing.Hash) error {
	if err := checkPath(path); err != nil {
		return err
	}
	d, name, err := te.walk(path, true)
	if err != nil {
		return err
	}
	// A directory made by this draft is in subdirs only until Write.
	if e, ok := d.entries[name]; ok && e.Mode == filemode.Dir || d.subdirs[name] != nil {
		return fmt.Errorf("%s is a directory", path)
	}
	d.entries[name] = object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: blob}
	markChanged(te.root, strings.Split(path, "/"))
	return nil
}

func markChanged(d *dir, parts []string) {
	for i := 0; ; i++ {
		d.changed = true
		if i == len(parts)-1 {
			return
		}
		d = d.subdirs[parts[i]]
	}
}

// Write stores every tree changed since the last Write, deepest first, and returns the
// root tree's hash. The editor goes on from that tree.
func (te *treeEditor) Write() (plumbing.Hash, error) {
	return te.write(te.root)
}

func (te *treeEditor) write(d *dir) (plumbing.Hash, error) {
	for name, sub := range d.subdirs {
		if !sub.changed {
			continue
		}
		h, err := te.write(sub)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		d.entries[name] = object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h}
	}
	t := &object.Tree{Entries: make([]object.TreeEntry, 0, len(d.entries))}
	for _, e := range d.entries {
		t.Entries = append(t.Entries, e)
	}
	// git orders a tree's entries by name, a directory's name read as if it ended in "/".
	sortKey := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(t.Entries, func(i, j int) bool { return sortKey(t.Entries[i]) < sortKey(t.Entries[j]) })
	obj := te.out.NewEncodedObject()
	if err := t.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	d.changed = false
	return te.out.SetEncodedObject(obj)
}

// checkPath refuses any path that could leave the worktree or touch git's own files.
func checkPath(path string) error {
	if path == "" || strings.HasPrefix(path, "/") || strings.Contains(path, "\\") {
		return fmt.Errorf("unsafe path %q", path)
	}
	for _, part := range strings.Split(path, "/") {
		if part == "" || part == "." || part == ".." || isDotGit(part) ||
			strings.ContainsRune(part, 0) {
			return fmt.Errorf("unsafe path %q", path)
		}
	}
	return nil
}

// isDotGit reports whether a file system may take name for ".git", as git fsck does
// (hasDotgit): case aside, macOS ignores some invisible code points, and Windows ignores
// trailing dots and spaces and a ":stream" suffix, and knows ".git" as "git~1" too.
func isDotGit(name string) bool {
	name = strings.Map(func(r rune) rune {
		if r >= '\u200c' && r <= '\u200f' || r >= '\u202a' && r <= '\u202e' ||
			r >= '\u206a' && r <= '\u206f' || r == '\ufeff' {
			return -1
		}
		return r
	}, name)
	name, _, _ = strings.Cut(name, ":")
	name = strings.TrimRight(name, ". ")
	return strings.EqualFold(name, ".git") || strings.EqualFold(name, "git~1")
}
