package vcs

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// A memory repo's index holds every file agmem ever wrote: a year's is 1,000,000
// entries, 129 MB, and rewriting it took most of a flush's time. Past splitIndexFrom
// entries agmem writes it as git's split index (git's core.splitIndex, described in
// git's index-format document): a shared index, .git/sharedindex.<its checksum>,
// holding most entries and written once in a while, and the index itself, holding the
// entries added since, a bitmap of the shared ones left out, and the shared index's
// name (the "link" extension). git reads and keeps it as it is when core.splitIndex is
// unset; core.splitIndex = false makes agmem write the whole index, true makes it split
// the smallest.
//
// A new entry whose path the shared index holds leaves the shared one out and is added,
// which git reads as it reads a replaced entry. The index's own entries are folded into
// a new shared index once they pass maxShareChange of its size, as git does, though
// sooner than git's default.

// splitIndexFrom is how many entries an index holds before agmem splits it.
var splitIndexFrom = 10000

// maxShareChange is the share of the shared index's entries past which the index's own
// are folded into a new one. git's splitIndex.maxPercentChange defaults to a fifth, but
// every flush adds to agmem's index, and reads and writes its own entries whole: on a
// year's repo (1,200,000 entries) they grew to 200,000 and 17 MB, reading and writing
// them was half of a flush of 1,000 (about 2 µs an entry), and the flush took 850 ms.
// A fold writes the whole shared index: 2.3 s there. By those figures, folding at a
// twentieth a flush of 1,000 pays on average about 70 ms for the index's own entries
// and 40 for its share of folds, against 270 and 10 at a fifth.
const maxShareChange = 0.05

// gitIndex is an index as read: its own entries, and for a split index, the shared
// index it links to and the positions of the shared entries it leaves out.
type gitIndex struct {
	version uint32
	own     []indexEntry // in name order; for a split index, those it adds
	base    *sharedIndex // nil: not split
	deleted map[int]bool // positions in base
}

// sharedIndex is a shared index file, mapped, with where one entry in sampleEvery
// starts: every flush reads the shared index, and an offset for each of a year's
// 1,400,000 entries was 5.6 MB of fresh memory and 20 of the 35 ms its reading took.
type sharedIndex struct {
	path  string
	hash  plumbing.Hash
	data  []byte
	n     int      // its entries
	end   int      // where its checksum starts, which no entry runs past
	every []uint32 // where entries 0, sampleEvery, 2·sampleEvery, … start
	unmap func()
}

// sampleEvery is how many entries of a shared index one offset kept stands for.
const sampleEvery = 64

func (s *sharedIndex) len() int { return s.n }

// at is where entry i starts: from the offset kept before it, past the entries between.
func (s *sharedIndex) at(i int) int {
	off := int(s.every[i/sampleEvery])
	for range i % sampleEvery {
		off += s.size(off)
	}
	return off
}

// size is the size of the entry at off, which readShared found whole.
func (s *sharedIndex) size(off int) int {
	_, _, size := entrySpan(s.data[:s.end], off)
	return size
}

func (s *sharedIndex) raw(i int) []byte { return s.rawAt(s.at(i)) }

func (s *sharedIndex) rawAt(off int) []byte { return s.data[off : off+s.size(off)] }

func (s *sharedIndex) name(i int) []byte { return nameOf(s.raw(i)) }

// nameOf is the name of an entry, raw.
func nameOf(raw []byte) []byte { return bytes.TrimRight(raw[entryHead(raw):], "\x00") }

func (s *sharedIndex) entry(i int) indexEntry {
	raw := s.raw(i)
	return indexEntry{name: string(nameOf(raw)), raw: raw}
}

// find is the first position whose entry has name, and whether there is one: a search
// of the entries whose offsets are kept, then a walk of those between two of them.
func (s *sharedIndex) find(name string) (int, bool) {
	if s.n == 0 {
		return 0, false
	}
	k := sort.Search(len(s.every), func(k int) bool { return string(nameOf(s.rawAt(int(s.every[k])))) >= name })
	i := max(k-1, 0) * sampleEvery
	for off := int(s.every[i/sampleEvery]); i < s.n; i++ {
		raw := s.rawAt(off)
		if n := nameOf(raw); string(n) >= name { // compared, not copied
			return i, string(n) == name
		}
		off += len(raw)
	}
	return s.n, false
}

// readShared maps .git/sharedindex.<h>. Its checksum is its name, and is not
// recomputed: git checks it when it reads the file, and agmem copies its entries only
// when it writes a new shared index (fold), which git then checks too.
func readShared(gitDir string, h plumbing.Hash) (*sharedIndex, error) {
	path := filepath.Join(gitDir, "sharedindex."+h.String())
	data, unmap, err := mapFile(path)
	if err != nil {
		return nil, fmt.Errorf("read index: its shared index: %w (git reset rewrites the index from HEAD, leaving the files)", err)
	}
	s := &sharedIndex{path: path, hash: h, data: data, unmap: unmap}
	version, count, err := indexHeader(data)
	if err == nil && version == 4 {
		err = errors.New("read index: a shared index of version 4 is not supported")
	}
	if err == nil {
		// index.skipHash leaves the checksum zero.
		if sum := data[len(data)-len(h):]; !bytes.Equal(sum, h[:]) && !bytes.Equal(sum, plumbing.ZeroHash[:]) {
			err = fmt.Errorf("read index: %s is not the shared index it names", path)
		}
	}
	if err != nil {
		unmap()
		return nil, err
	}
	// Every entry is read once here, so that one cut short is an error now, not a panic
	// of the walks later.
	s.every = make([]uint32, 0, min(count, len(data)/64)/sampleEvery+1) // an entry is 64 bytes or more
	s.end = len(data) - len(h)
	_, err = scanEntries(data, count, func(at, _, _, _ int) {
		if s.n%sampleEvery == 0 {
			s.every = append(s.every, uint32(at))
		}
		s.n++
	})
	if err != nil {
		unmap()
		return nil, err
	}
	return s, nil
}

// readLink reads a split index's link extension: the shared index's name, the bitmap of
// the shared entries left out, and the bitmap of those replaced by the first of x's own
// entries (git's way), which becomes leaving them out and adding those.
func (x *gitIndex) readLink(link []byte, gitDir string) error {
	if len(link) < 20 {
		return errors.New("read index: its link extension is cut short")
	}
	base, err := readShared(gitDir, plumbing.Hash(link[:20]))
	if err != nil {
		return err
	}
	x.base = base
	deleted, rest, err := readEWAH(link[20:], base.len())
	if err != nil {
		return err
	}
	replaced, _, err := readEWAH(rest, base.len())
	if err != nil {
		return err
	}
	if len(replaced) > len(x.own) {
		return errEWAH
	}
	x.deleted = make(map[int]bool, len(deleted)+len(replaced))
	for _, p := range deleted {
		x.deleted[p] = true
	}
	for i, p := range replaced {
		if x.deleted[p] || x.own[i].name != "" {
			return errEWAH
		}
		x.deleted[p] = true
		x.own[i] = named(x.own[i].raw, string(base.name(p)))
	}
	slices.SortStableFunc(x.own, func(a, b indexEntry) int { return strings.Compare(a.name, b.name) })
	return nil
}

// named is entry raw (git writes one that replaces a shared entry without a name)
// under name.
func named(raw []byte, name string) indexEntry {
	head := entryHead(raw)
	out := append(make([]byte, 0, (head+len(name)+8)&^7), raw[:head]...)
	flags := binary.BigEndian.Uint16(out[60:])&^flagNameMask | uint16(min(len(name), flagNameMask))
	binary.BigEndian.PutUint16(out[60:], flags)
	out = append(out, name...)
	for len(out) == head+len(name) || len(out)%8 != 0 {
		out = append(out, 0) // 1 to 8 NULs end the name and pad the entry
	}
	return indexEntry{name: name, raw: out}
}

// entryHead is the length of an entry before its name.
func entryHead(raw []byte) int {
	if binary.BigEndian.Uint16(raw[60:])&flagExtended != 0 {
		return entryFixedLen + 2
	}
	return entryFixedLen
}

func (x *gitIndex) close() {
	if x.base != nil {
		x.base.unmap()
		x.base = nil
	}
}

// lookup is the stage-0 entry, or the first, of name.
func (x *gitIndex) lookup(name string) (indexEntry, bool) {
	i := sort.Search(len(x.own), func(i int) bool { return x.own[i].name >= name })
	if i < len(x.own) && x.own[i].name == name {
		return x.own[i], true
	}
	if x.base == nil {
		return indexEntry{}, false
	}
	for p, ok := x.base.find(name); ok && p < x.base.len() && string(x.base.name(p)) == name; p++ {
		if !x.deleted[p] {
			return x.base.entry(p), true
		}
	}
	return indexEntry{}, false
}

// count is how many entries the index holds.
func (x *gitIndex) count() int {
	n := len(x.own)
	if x.base != nil {
		n += x.base.len() - len(x.deleted)
	}
	return n
}

// with returns own with entries in place of every one of the same paths (conflict
// stages included), in name order.
func with(own, entries []indexEntry) []indexEntry {
	own = withoutPaths(own, entries)
	out := make([]indexEntry, 0, len(own)+len(entries))
	i := 0
	for _, e := range own {
		for ; i < len(entries) && entries[i].name < e.name; i++ {
			out = append(out, entries[i])
		}
		out = append(out, e)
	}
	return append(out, entries[i:]...)
}

// withoutPaths is own without the entries of the paths of entries.
func withoutPaths(own, entries []indexEntry) []indexEntry {
	paths := make(map[string]bool, len(entries))
	for _, e := range entries {
		paths[e.name] = true
	}
	out := make([]indexEntry, 0, len(own))
	for _, e := range own {
		if !paths[e.name] {
			out = append(out, e)
		}
	}
	return out
}

// writeAll writes top (in name order) and the shared entries not in skip, merged by name.
func (x *gitIndex) writeAll(w *indexWriter, top []indexEntry, skip map[int]bool) {
	i := 0
	if x.base != nil && x.base.n > 0 {
		off := x.base.at(0)
		for p := 0; p < x.base.len(); p++ {
			raw := x.base.rawAt(off)
			off += len(raw)
			if skip[p] {
				continue
			}
			for name := string(nameOf(raw)); i < len(top) && top[i].name < name; i++ {
				w.add(top[i])
			}
			w.out = append(w.out, raw...)
			w.count++
		}
	}
	for ; i < len(top); i++ {
		w.add(top[i])
	}
}

// update is what Materialize writes: the index, and, when it folds its entries into a
// new shared index, that one, to be in place first.
type update struct {
	index      []byte
	shared     []byte       // the new shared index; nil: none to write
	sharedPath string       // the shared index the index links to, "" for none
	dropped    *sharedIndex // the shared index no longer linked to, to be removed
}

// withEntries is x with entries (in name order) in place of every one of the same
// paths, split or not as core.splitIndex (setting: "true", "false", "" for unset) and
// its size say.
func (x *gitIndex) withEntries(gitDir string, entries []indexEntry, setting string) update {
	size := 0
	for _, e := range entries {
		size += len(e.raw)
	}
	for _, e := range x.own {
		size += len(e.raw)
	}
	skip := x.sharedWithout(entries)
	split := setting == "true" || setting == "" && x.count()+len(entries) >= splitIndexFrom
	if !split {
		w := newIndexWriter(x.version, size+x.sharedSize())
		x.writeAll(w, with(x.own, entries), skip)
		return update{index: w.finish(nil), dropped: x.base}
	}
	own := with(x.own, entries)
	if x.base != nil && float64(len(own)) <= maxShareChange*float64(x.base.len()) {
		link := linkExtension(x.base.hash, skip)
		w := newIndexWriter(x.version, size+len(link))
		for _, e := range own {
			w.add(e)
		}
		return update{index: w.finish(link), sharedPath: x.base.path}
	}
	// Folded: the shared index takes every entry but the new ones, which the index adds.
	sw := newIndexWriter(x.version, size+x.sharedSize())
	x.writeAll(sw, withoutPaths(x.own, entries), skip)
	shared := sw.finish(nil)
	h := plumbing.Hash(shared[len(shared)-len(plumbing.ZeroHash):])
	link := linkExtension(h, nil)
	w := newIndexWriter(x.version, size+len(link))
	for _, e := range entries {
		w.add(e)
	}
	return update{index: w.finish(link), shared: shared,
		sharedPath: filepath.Join(gitDir, "sharedindex."+h.String()), dropped: x.base}
}

func (x *gitIndex) sharedSize() int {
	if x.base == nil {
		return 0
	}
	return len(x.base.data)
}

// sharedWithout is the positions of the shared entries to leave out: those left out
// already, and those of the paths of entries.
func (x *gitIndex) sharedWithout(entries []indexEntry) map[int]bool {
	if x.base == nil {
		return nil
	}
	skip := make(map[int]bool, len(x.deleted)+len(entries))
	for p := range x.deleted {
		skip[p] = true
	}
	for _, e := range entries {
		for p, ok := x.base.find(e.name); ok && p < x.base.len() && string(x.base.name(p)) == e.name; p++ {
			skip[p] = true
		}
	}
	return skip
}

// linkExtension names the shared index h and the positions of its entries left out;
// none is replaced.
func linkExtension(h plumbing.Hash, deleted map[int]bool) []byte {
	positions := make([]int, 0, len(deleted))
	for p := range deleted {
		positions = append(positions, p)
	}
	slices.Sort(positions)
	body := append([]byte(nil), h[:]...)
	body = appendEWAH(body, positions)
	body = appendEWAH(body, nil)
	return append(binary.BigEndian.AppendUint32([]byte("link"), uint32(len(body))), body...)
}

// place writes the new shared index, if there is one. After the index is in place,
// finish removes the shared index no longer linked to, or makes the one still linked
// to look used to git, which removes those unused for two weeks.
func (u update) place() error {
	if u.shared == nil || exists(u.sharedPath) {
		return nil
	}
	return writeReadOnly(u.sharedPath, func(w *bufio.Writer) error {
		_, err := w.Write(u.shared)
		return err
	})
}

func (u update) finish() {
	if u.dropped != nil && u.dropped.path != u.sharedPath {
		os.Remove(u.dropped.path)
	}
	if u.shared == nil && u.sharedPath != "" {
		now := time.Now()
		os.Chtimes(u.sharedPath, now, now)
	}
}
