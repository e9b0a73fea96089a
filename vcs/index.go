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

// The index is rewritten whole, as git does, but without decoding the entries agmem does
// not touch: each is kept as the bytes it was, and agmem's own are merged in by name.
// This keeps a flush's cost near a copy of the file rather than a decode and re-encode
// of every entry in the repo.

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

// spliceIndex returns an index of the given version holding the entries kept (as
// readIndex read them) with entries in place of every one of the same paths (conflict
// stages included). Extensions are dropped: they describe the old entries, and git
// rebuilds them as it needs.
func spliceIndex(version uint32, kept, entries []indexEntry) []byte {
	replaced := make(map[string]bool, len(entries))
	size := 12 + sha1.Size
	for _, e := range entries {
		replaced[e.name] = true
		size += len(e.raw)
	}
	for _, e := range kept {
		size += len(e.raw)
	}
	// One buffer, sized once: for a repo of 100,000 files it holds some 10 MB.
	out := append(make([]byte, 0, size), "DIRC"...)
	out = binary.BigEndian.AppendUint32(out, version)
	out = binary.BigEndian.AppendUint32(out, 0) // the count, known at the end
	count := 0
	write := func(e indexEntry) {
		out = append(out, e.raw...)
		count++
	}
	i := 0
	for _, e := range kept {
		if replaced[e.name] {
			continue
		}
		for ; i < len(entries) && entries[i].name < e.name; i++ {
			write(entries[i])
		}
		write(e)
	}
	for ; i < len(entries); i++ {
		write(entries[i])
	}
	binary.BigEndian.PutUint32(out[8:], uint32(count))
	sum := sha1.Sum(out)
	return append(out, sum[:]...)
}

// readIndex splits an index into its entries, in order. Versions 2 and 3 are read as
// they are; version 4 (path-compressed) is decoded by go-git and re-encoded as 3.
func readIndex(data []byte) (version uint32, entries []indexEntry, err error) {
	if len(data) == 0 {
		return 2, nil, nil
	}
	if len(data) < 12+sha1.Size || string(data[:4]) != "DIRC" {
		return 0, nil, errors.New("read index: not a git index")
	}
	// index.skipHash leaves the checksum zero; any other must match.
	if want := data[len(data)-sha1.Size:]; !bytes.Equal(want, make([]byte, sha1.Size)) {
		if sum := sha1.Sum(data[:len(data)-sha1.Size]); !bytes.Equal(sum[:], want) {
			return 0, nil, errors.New("read index: checksum mismatch")
		}
	}
	version = binary.BigEndian.Uint32(data[4:8])
	count := binary.BigEndian.Uint32(data[8:12])
	switch version {
	case 2, 3:
	case 4:
		return readIndexV4(data)
	default:
		return 0, nil, fmt.Errorf("read index: version %d is not supported", version)
	}
	end := len(data) - sha1.Size
	off := 12
	entries = make([]indexEntry, 0, count)
	for n := uint32(0); n < count; n++ {
		if off+entryFixedLen > end {
			return 0, nil, errors.New("read index: entries run past the end")
		}
		flags := binary.BigEndian.Uint16(data[off+60:])
		head := entryFixedLen
		if flags&flagExtended != 0 {
			head += 2
		}
		nameLen := int(flags & flagNameMask)
		if nameLen == flagNameMask { // a long name: it ends at its NUL
			nameLen = bytes.IndexByte(data[off+head:end], 0)
		}
		size := (head + nameLen + 8) &^ 7
		if nameLen < 0 || off+size > end {
			return 0, nil, errors.New("read index: an entry runs past the end")
		}
		entries = append(entries, indexEntry{name: string(data[off+head : off+head+nameLen]), raw: data[off : off+size]})
		off += size
	}
	if err := checkExtensions(data[off:end]); err != nil {
		return 0, nil, err
	}
	return version, entries, nil
}

// checkExtensions refuses an index whose meaning depends on a mandatory extension (a
// lower-case signature such as "link" for a split index): it cannot be dropped.
func checkExtensions(ext []byte) error {
	for len(ext) >= 8 {
		sig := ext[:4]
		if sig[0] < 'A' || sig[0] > 'Z' {
			return fmt.Errorf("read index: extension %q is not supported (split or sparse index)", sig)
		}
		size := int(binary.BigEndian.Uint32(ext[4:8]))
		if 8+size > len(ext) {
			return errors.New("read index: an extension runs past the end")
		}
		ext = ext[8+size:]
	}
	return nil
}

// readIndexV4 decodes a version 4 index with go-git and re-encodes its entries as
// version 3, which every git reads.
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
