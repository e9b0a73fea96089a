package vcs

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// The index is rewritten without decoding the entries agmem does not touch: each is kept
// as the bytes it was, and agmem's own are merged in by name. A big repo's index is
// split, as git's core.splitIndex does it (splitindex.go): a flush writes only its own
// entries and a link to a shared index holding the rest.

// indexEntry is one index entry in git's on-disk form (version 2 or 3).
type indexEntry struct {
	name string
	raw  []byte
}

const (
	entryFixedLen = 62     // stat data, object id and flags, before the name
	flagExtended  = 0x4000 // a version 3 entry has two more flag bytes
	flagNameMask  = 0x0fff
)

// newIndexEntry is a stage-0 entry for a regular file, with the stat data git compares
// to know the file unchanged without reading it.
func newIndexEntry(name string, h plumbing.Hash, fi os.FileInfo) indexEntry {
	var e index.Entry
	fillStat(&e, fi)
	raw := make([]byte, 0, (entryFixedLen+len(name)+8)&^7)
	for _, v := range []uint32{
		uint32(e.CreatedAt.Unix()), uint32(e.CreatedAt.Nanosecond()),
		uint32(e.ModifiedAt.Unix()), uint32(e.ModifiedAt.Nanosecond()),
		e.Dev, e.Inode, 0o100644, e.UID, e.GID, e.Size,
	} {
		raw = binary.BigEndian.AppendUint32(raw, v)
	}
	raw = append(raw, h[:]...)
	raw = binary.BigEndian.AppendUint16(raw, uint16(min(len(name), flagNameMask)))
	raw = append(raw, name...)
	for len(raw) == entryFixedLen+len(name) || len(raw)%8 != 0 {
		raw = append(raw, 0) // 1 to 8 NULs end the name and pad the entry
	}
	return indexEntry{name: name, raw: raw}
}

// An index holds the entries it was given in order, whatever else it holds.
type indexWriter struct {
	out   []byte
	count int
}

// newIndexWriter starts an index of size bytes of entries and extensions: the room
// for them all, so that the index is not copied as it grows (a split index's own
// entries grow to megabytes, and its link extension came after them).
func newIndexWriter(version uint32, size int) *indexWriter {
	w := &indexWriter{out: make([]byte, 0, 12+size+sha1.Size)}
	w.out = append(w.out, "DIRC"...)
	w.out = binary.BigEndian.AppendUint32(w.out, version)
	w.out = binary.BigEndian.AppendUint32(w.out, 0) // the count, known at the end
	return w
}

func (w *indexWriter) add(e indexEntry) {
	w.out = append(w.out, e.raw...)
	w.count++
}

// finish appends the extensions and the checksum, and returns the file's bytes.
func (w *indexWriter) finish(extensions []byte) []byte {
	binary.BigEndian.PutUint32(w.out[8:], uint32(w.count))
	w.out = append(w.out, extensions...)
	sum := sha1.Sum(w.out)
	return append(w.out, sum[:]...)
}

// readIndex reads an index file. Versions 2 and 3 are read as they are; version 4
// (path-compressed) is decoded by go-git and re-encodes as 3. A split index (git's
// "link" extension) names its shared index, read from gitDir.
func readIndex(data []byte, gitDir string) (*gitIndex, error) {
	if len(data) == 0 {
		return &gitIndex{version: 2}, nil
	}
	version, entries, ext, err := readIndexFile(data)
	if err != nil {
		return nil, err
	}
	x := &gitIndex{version: version, own: entries}
	link, err := checkExtensions(ext)
	if err != nil || link == nil {
		return x, err
	}
	if err := x.readLink(link, gitDir); err != nil {
		x.close()
		return nil, err
	}
	return x, nil
}

// readIndexFile splits an index file into its entries, in order, and its extensions.
func readIndexFile(data []byte) (version uint32, entries []indexEntry, ext []byte, err error) {
	version, count, err := indexHeader(data)
	if err != nil {
		return 0, nil, nil, err
	}
	// index.skipHash leaves the checksum zero; any other must match.
	if want := data[len(data)-sha1.Size:]; !bytes.Equal(want, make([]byte, sha1.Size)) {
		if sum := sha1.Sum(data[:len(data)-sha1.Size]); !bytes.Equal(sum[:], want) {
			return 0, nil, nil, errors.New("read index: checksum mismatch")
		}
	}
	if version == 4 {
		version, entries, err = readIndexV4(data)
		return version, entries, nil, err
	}
	entries = make([]indexEntry, 0, count)
	off, err := scanEntries(data, count, func(at, nameAt, nameLen, size int) {
		entries = append(entries, indexEntry{name: string(data[nameAt : nameAt+nameLen]), raw: data[at : at+size]})
	})
	if err != nil {
		return 0, nil, nil, err
	}
	return version, entries, data[off : len(data)-sha1.Size], nil
}

// indexHeader reads an index's version and number of entries.
func indexHeader(data []byte) (version uint32, count int, err error) {
	if len(data) < 12+sha1.Size || string(data[:4]) != "DIRC" {
		return 0, 0, errors.New("read index: not a git index")
	}
	switch version = binary.BigEndian.Uint32(data[4:8]); version {
	case 2, 3, 4:
		return version, int(binary.BigEndian.Uint32(data[8:12])), nil
	}
	return 0, 0, fmt.Errorf("read index: version %d is not supported", version)
}

// scanEntries calls fn with where each of the count entries of an index of version 2 or
// 3 starts, where its name starts, its name's length and its size, and returns where
// the entries end.
func scanEntries(data []byte, count int, fn func(at, nameAt, nameLen, size int)) (int, error) {
	end := len(data) - sha1.Size
	off := 12
	for n := 0; n < count; n++ {
		if off+entryFixedLen > end {
			return 0, errors.New("read index: entries run past the end")
		}
		head, nameLen, size := entrySpan(data[:end], off)
		if nameLen < 0 || off+size > end {
			return 0, errors.New("read index: an entry runs past the end")
		}
		fn(off, off+head, nameLen, size)
		off += size
	}
	return off, nil
}

// entrySpan reads the entry of an index of version 2 or 3 at off in data (which ends
// where the entries may): the length of its head, of its name (-1 for a long name with
// no end), and its size.
func entrySpan(data []byte, off int) (head, nameLen, size int) {
	head = entryHead(data[off:])
	nameLen = int(binary.BigEndian.Uint16(data[off+60:]) & flagNameMask)
	if nameLen == flagNameMask { // a long name: it ends at its NUL
		nameLen = bytes.IndexByte(data[off+head:], 0)
	}
	return head, nameLen, (head + nameLen + 8) &^ 7
}

// checkExtensions returns the "link" extension of a split index, if there is one, and
// refuses an index whose meaning depends on another mandatory extension (a lower-case
// signature, such as "sdir" for a sparse index): it cannot be dropped. The others are
// caches, which git rebuilds as it needs.
func checkExtensions(ext []byte) (link []byte, err error) {
	for len(ext) >= 8 {
		sig := ext[:4]
		size := int(binary.BigEndian.Uint32(ext[4:8]))
		if 8+size > len(ext) {
			return nil, errors.New("read index: an extension runs past the end")
		}
		switch {
		case string(sig) == "link":
			link = ext[8 : 8+size]
		case sig[0] < 'A' || sig[0] > 'Z':
			return nil, fmt.Errorf("read index: extension %q is not supported (a sparse index)", sig)
		}
		ext = ext[8+size:]
	}
	return link, nil
}

// readIndexV4 decodes a version 4 index with go-git and re-encodes its entries as
// version 3, which every git reads. go-git reads no split index of version 4.
func readIndexV4(data []byte) (uint32, []indexEntry, error) {
	var idx index.Index
	if err := index.NewDecoder(bytes.NewReader(data)).Decode(&idx); err != nil {
		return 0, nil, fmt.Errorf("read index: %w", err)
	}
	entries := make([]indexEntry, 0, len(idx.Entries))
	for _, e := range idx.Entries {
		// go-git writes one entry at a time as well as a whole index: keep its bytes.
		var buf bytes.Buffer
		one := &index.Index{Version: 3, Entries: []*index.Entry{e}}
		if err := index.NewEncoder(&buf).Encode(one); err != nil {
			return 0, nil, fmt.Errorf("read index: %w", err)
		}
		entries = append(entries, indexEntry{name: e.Name, raw: buf.Bytes()[12 : buf.Len()-sha1.Size]})
	}
	return 3, entries, nil
}
