package vcs

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// A Change is a file to add to (or replace in) the tree, and to write into the worktree.
type Change struct {
	Path string        // slash-separated, relative to the repo root
	Data []byte        // not to be changed: read from git, it may be the object cache's
	Hash plumbing.Hash // its blob's
}

// dir is one directory of the tree being edited, kept as git encodes it: the tree object
// last read or written, and the entries put since. Only directories on changed paths are
// ever loaded, each once a draft, and writing one again merges the few entries put into
// its sorted bytes: an edit costs in proportion to its changes, and a directory of a
// hundred thousand files costs a copy of its bytes, not a parse and a sort.
type dir struct {
	raw     []byte        // the tree object last read or written: entries in git's order
	offsets []int         // where each entry of raw starts, and len(raw) last
	hash    plumbing.Hash // raw's object id; zero for a directory this draft made
	depth   int           // deltas from raw to a whole object in the draft's pack; inRepo if raw is not in it
	puts    map[string]object.TreeEntry
	subdirs map[string]*dir // loaded (and possibly changed) subdirectories
	changed bool
}

// inRepo is the depth of a tree the repository holds already: a pack may not hold a
// delta against an object outside it, so the next version is written whole.
const inRepo = -1

// maxDeltaDepth bounds a chain of deltas, as git's own default (pack.depth) does: a
// reader applies every delta of the chain to get the object.
const maxDeltaDepth = 50

func newDir() *dir {
	return &dir{offsets: []int{0}, depth: inRepo, puts: map[string]object.TreeEntry{}, subdirs: map[string]*dir{}}
}

// loadDir reads the tree h (an empty directory for the zero hash).
func (r *Git) loadDir(h plumbing.Hash) (*dir, error) {
	d := newDir()
	if h.IsZero() {
		return d, nil
	}
	t, ok := r.trees.get(h)
	if !ok {
		var err error
		if t, err = r.parseTree(h); err != nil {
			return nil, fmt.Errorf("read tree %s: %w", h, err)
		}
		r.trees.put(h, t)
	}
	d.raw, d.offsets, d.hash = t.raw, t.offsets, h
	return d, nil
}

func (r *Git) parseTree(h plumbing.Hash) (parsedTree, error) {
	obj, err := r.wholeObject(h)
	if err == nil && obj.typ != plumbing.TreeObject {
		err = fmt.Errorf("a %s, not a tree", obj.typ)
	}
	if err != nil {
		return parsedTree{}, err
	}
	offsets, err := entryOffsets(obj.data)
	return parsedTree{obj.data, offsets}, err
}

// wholeObject reads the object h from the repository.
func (r *Git) wholeObject(h plumbing.Hash) (stagedObject, error) {
	if o, ok, err := r.packedObject(h); ok || err != nil {
		return stagedObject{typ: o.typ, data: o.data}, err
	}
	obj, err := r.goGitObject(plumbing.AnyObject, h)
	if err != nil {
		return stagedObject{}, err
	}
	rd, err := obj.Reader()
	if err != nil {
		return stagedObject{}, err
	}
	defer rd.Close()
	data := make([]byte, obj.Size())
	_, err = io.ReadFull(rd, data)
	return stagedObject{typ: obj.Type(), data: data}, err
}

// parsedTree is a tree object and where its entries start. Neither is ever changed in
// place: a dir's next version is new slices.
type parsedTree struct {
	raw     []byte
	offsets []int
}

// treeCache keeps the trees last read or written, by id, up to maxCachedTreeBytes: a
// flush reads a big directory for each commit it materialises from git and for each
// round's draft, and most of those reads are of a version it has just read or written.
type treeCache = boundedCache[plumbing.Hash, parsedTree]

const maxCachedTreeBytes = 64 << 20

func (t parsedTree) size() int { return len(t.raw) }

// entryOffsets finds where each entry of an encoded tree starts: "<mode> <name>\0" and
// a 20-byte object id. Each entry holds a NUL, and an id may hold more: their count is
// room enough, where growing the slice by doubling made half of what parsing the big
// directories of a rebuild allocated.
func entryOffsets(raw []byte) ([]int, error) {
	offsets := make([]int, 0, bytes.Count(raw, []byte{0})+1)
	for off := 0; off < len(raw); {
		offsets = append(offsets, off)
		nul := bytes.IndexByte(raw[off:], 0)
		if nul < 0 || off+nul+1+len(plumbing.ZeroHash) > len(raw) || bytes.IndexByte(raw[off:off+nul], ' ') < 0 {
			return nil, fmt.Errorf("malformed entry at byte %d", off)
		}
		off += nul + 1 + len(plumbing.ZeroHash)
	}
	return append(offsets, len(raw)), nil
}

func (d *dir) len() int { return len(d.offsets) - 1 }

// entry decodes the i-th entry of raw.
func (d *dir) entry(i int) object.TreeEntry {
	e := d.raw[d.offsets[i]:d.offsets[i+1]]
	sp, nul := bytes.IndexByte(e, ' '), bytes.IndexByte(e, 0)
	mode, _ := filemode.New(string(e[:sp]))
	var h plumbing.Hash
	copy(h[:], e[nul+1:])
	return object.TreeEntry{Name: string(e[sp+1 : nul]), Mode: mode, Hash: h}
}

// objectID is the i-th entry's object id as the tree holds it, without decoding the rest.
func (d *dir) objectID(i int) []byte {
	return d.raw[d.offsets[i+1]-len(plumbing.ZeroHash) : d.offsets[i+1]]
}

// name is the i-th entry's name, without decoding the rest.
func (d *dir) name(i int) []byte {
	e := d.raw[d.offsets[i]:d.offsets[i+1]]
	return e[bytes.IndexByte(e, ' ')+1 : bytes.IndexByte(e, 0)]
}

// isDir says whether the i-th entry is a directory, as git reads its mode (S_ISDIR): git
// writes "40000", and takes "040000" or "40755", which another tool may write, as one.
func (d *dir) isDir(i int) bool { return modeOf(d.raw[d.offsets[i]:])&0o170000 == 0o040000 }

// mode is the i-th entry's mode as git reads it (canonical_mode): a directory's
// 040000, a file's 0644 or 0755 by its owner's execute bit, a link's or a gitlink's as
// it is.
func (d *dir) mode(i int) uint32 {
	switch m := modeOf(d.raw[d.offsets[i]:]); m & 0o170000 {
	case 0o040000, 0o120000, 0o160000:
		return m & 0o170000
	case 0o100000:
		if m&0o100 != 0 {
			return 0o100755
		}
		return 0o100644
	default:
		return m
	}
}

// modeOf reads the octal mode an entry starts with.
func modeOf(entry []byte) uint32 {
	m := uint32(0)
	for _, c := range entry {
		if c < '0' || c > '7' {
			break
		}
		m = m<<3 | uint32(c-'0')
	}
	return m
}

// search is the index of the first entry of raw that git orders at or after name.
func (d *dir) search(name string, isDir bool) int {
	key := []byte(name)
	return sort.Search(d.len(), func(i int) bool {
		return gitCompare(d.name(i), d.isDir(i), key, isDir) >= 0
	})
}

// lookup finds the entry called name, put or read.
func (d *dir) lookup(name string) (object.TreeEntry, bool) {
	if e, ok := d.puts[name]; ok {
		return e, true
	}
	// A file and a directory of one name sort apart: "a" < "a.md" < "a/".
	for _, isDir := range []bool{false, true} {
		if i := d.search(name, isDir); i < d.len() && string(d.name(i)) == name {
			return d.entry(i), true
		}
	}
	return object.TreeEntry{}, false
}

// gitCompare orders tree entries as git does: by name, a directory's name read as if it
// ended in "/".
func gitCompare(a []byte, aDir bool, b []byte, bDir bool) int {
	n := min(len(a), len(b))
	if c := bytes.Compare(a[:n], b[:n]); c != 0 {
		return c
	}
	next := func(name []byte, isDir bool) int {
		switch {
		case n < len(name):
			return int(name[n])
		case isDir:
			return '/'
		}
		return 0
	}
	return next(a, aDir) - next(b, bDir)
}

// treeEditor edits the tree of a commit by adding files. It reads existing trees from
// the repository and writes new ones to out, the draft's staging area.
type treeEditor struct {
	r    *Git
	out  *stage
	root *dir
}

func newTreeEditor(r *Git, out *stage, base plumbing.Hash) (*treeEditor, error) {
	root, err := r.loadDir(base)
	if err != nil {
		return nil, err
	}
	return &treeEditor{r: r, out: out, root: root}, nil
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
			e, exists := d.lookup(name)
			switch {
			case exists && e.Mode != filemode.Dir:
				return nil, "", fmt.Errorf("%s: %s is a file, not a directory", path, name)
			case !exists && !create:
				return nil, "", nil
			}
			var err error
			if sub, err = te.r.loadDir(e.Hash); err != nil {
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
	_, ok := d.lookup(name)
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
	if e, ok := d.lookup(name); ok && e.Mode == filemode.Dir || d.subdirs[name] != nil {
		return fmt.Errorf("%s is a directory", path)
	}
	d.puts[name] = object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: blob}
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
func (te *treeEditor) Write() plumbing.Hash {
	te.write(te.root)
	return te.root.hash
}

// write makes d's new tree object: raw's entries with the puts merged in by name, a
// put replacing the entry of its name. A tree whose last version is in the draft is
// staged as a delta against it: copies of the unchanged runs and the new entries.
func (te *treeEditor) write(d *dir) {
	for name, sub := range d.subdirs {
		if sub.changed {
			te.write(sub)
			d.puts[name] = object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: sub.hash}
		}
	}
	puts := make([]object.TreeEntry, 0, len(d.puts))
	for _, e := range d.puts {
		puts = append(puts, e)
	}
	slices.SortFunc(puts, func(a, b object.TreeEntry) int {
		return gitCompare([]byte(a.Name), a.Mode == filemode.Dir, []byte(b.Name), b.Mode == filemode.Dir)
	})

	raw := make([]byte, 0, len(d.raw)+len(puts)*80)
	offsets := make([]int, 0, len(d.offsets)+len(puts))
	delta := newDeltaWriter()
	kept := 0 // raw's entries before kept are in the new tree or replaced
	keep := func(end int) {
		shift := len(raw) - d.offsets[kept]
		for _, off := range d.offsets[kept:end] {
			offsets = append(offsets, off+shift)
		}
		delta.copy(d.offsets[kept], d.offsets[end]-d.offsets[kept])
		raw = append(raw, d.raw[d.offsets[kept]:d.offsets[end]]...)
		kept = end
	}
	for _, e := range puts {
		i := d.search(e.Name, e.Mode == filemode.Dir)
		keep(i)
		if i < d.len() && string(d.name(i)) == e.Name {
			kept++ // replaced
		}
		offsets = append(offsets, len(raw))
		start := len(raw)
		raw = fmt.Appendf(raw, "%o %s\x00", uint32(e.Mode), e.Name)
		raw = append(raw, e.Hash[:]...)
		delta.insert(raw[start:])
	}
	keep(d.len())
	offsets = append(offsets, len(raw))

	h := plumbing.ComputeHash(plumbing.TreeObject, raw)
	if h != d.hash {
		obj := stagedObject{typ: plumbing.TreeObject, data: raw}
		depth := 0
		if d.depth != inRepo && d.depth < maxDeltaDepth {
			if diff := delta.finish(len(d.raw), len(raw)); len(diff) < len(raw)/2 {
				obj, depth = stagedObject{typ: plumbing.TreeObject, data: diff, base: d.hash}, d.depth+1
			}
		}
		te.out.add(h, obj)
		te.r.trees.put(h, parsedTree{raw, offsets})
		d.raw, d.offsets, d.hash, d.depth = raw, offsets, h, depth
	}
	clear(d.puts)
	d.changed = false
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
