package vcs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/klauspost/compress/zlib"
)

// A pack that git gc wrote holds most blobs as deltas against others, chains of them
// up to 50 long. go-git resolves each link inflating a byte at a time through its pack
// scanner, and on a repo of a year's sessions reading one session record that way took
// tens of milliseconds. Here a chain is resolved with a buffered inflater, and the
// objects it went through are kept (unpacked) for the next chain, which mostly shares
// them.

// unpacked keeps the objects deltas were last resolved against, by where they are.
type unpacked = boundedCache[packPlace, unpackedObject]

const maxUnpackedBytes = 32 << 20

type packPlace struct {
	pack string
	at   int64
}

// unpackedObject is a pack entry's object, its deltas applied.
type unpackedObject struct {
	typ  plumbing.ObjectType
	data []byte
}

func (o unpackedObject) size() int { return len(o.data) }

// maxDeltaChain bounds a chain's length, against a pack that loops: git writes at most
// 4,095.
const maxDeltaChain = 10000

// errOtherPack is a delta whose base is not in its pack (a thin pack): go-git finds it.
var errOtherPack = errors.New("a delta's base is in another pack")

// resolve reads the object of the entry at at of pack p, whole, applying its deltas.
func (r *Git) resolve(f *os.File, p packIndex, at int64, depth int) (unpackedObject, error) {
	place := packPlace{p.path, at}
	if o, ok := r.unpacked.get(place); ok {
		return o, nil
	}
	if depth > maxDeltaChain {
		return unpackedObject{}, fmt.Errorf("read %s: a chain of deltas longer than %d", p.path, maxDeltaChain)
	}
	var head [32]byte
	n, err := f.ReadAt(head[:], at)
	if n == 0 {
		return unpackedObject{}, fmt.Errorf("read %s: %w", p.path, err)
	}
	typ, size, hlen, err := entryHeader(head[:n])
	if err != nil {
		return unpackedObject{}, fmt.Errorf("read %s at %d: %w", p.path, at, err)
	}
	var base int64
	switch typ {
	case plumbing.OFSDeltaObject:
		back, m, err := readDeltaOffset(head[hlen:n])
		if err != nil || back <= 0 || back > at {
			return unpackedObject{}, fmt.Errorf("read %s at %d: bad delta offset", p.path, at)
		}
		base, hlen = at-back, hlen+m
	case plumbing.REFDeltaObject:
		if n < hlen+20 {
			return unpackedObject{}, fmt.Errorf("read %s at %d: a delta cut short", p.path, at)
		}
		var h plumbing.Hash
		copy(h[:], head[hlen:hlen+20])
		if base, err = p.idx.FindOffset(h); err != nil {
			return unpackedObject{}, errOtherPack
		}
		hlen += 20
	}
	data, err := inflate(f, at+int64(hlen), size)
	if err != nil {
		return unpackedObject{}, fmt.Errorf("read %s at %d: %w", p.path, at, err)
	}
	o := unpackedObject{typ, data}
	if typ == plumbing.OFSDeltaObject || typ == plumbing.REFDeltaObject {
		b, err := r.resolve(f, p, base, depth+1)
		if err != nil {
			return unpackedObject{}, err
		}
		if o.data, err = packfile.PatchDelta(b.data, data); err != nil {
			return unpackedObject{}, fmt.Errorf("read %s at %d: %w", p.path, at, err)
		}
		o.typ = b.typ
	}
	r.unpacked.put(place, o)
	return o, nil
}

// inflate reads the size bytes that the zlib stream at at of f inflates to.
func inflate(f *os.File, at, size int64) ([]byte, error) {
	zr, err := zlib.NewReader(bufio.NewReaderSize(io.NewSectionReader(f, at, 1<<62), 64<<10))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	var buf bytes.Buffer
	buf.Grow(int(size) + bytes.MinRead)
	if _, err := buf.ReadFrom(io.LimitReader(zr, size+1)); err != nil {
		return nil, err
	}
	if int64(buf.Len()) != size {
		return nil, fmt.Errorf("an entry of %d bytes where its header says %d", buf.Len(), size)
	}
	return buf.Bytes(), nil
}
