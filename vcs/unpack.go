package vcs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
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
		if o.data, err = applyDelta(b.data, data); err != nil {
			return unpackedObject{}, fmt.Errorf("read %s at %d: %w", p.path, at, err)
		}
		o.typ = b.typ
	}
	r.unpacked.put(place, o)
	return o, nil
}

// inflate reads the size bytes that the zlib stream at at of f inflates to.
func inflate(f *os.File, at, size int64) ([]byte, error) {
	zr, err := newInflater(f, at)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	// Read into a buffer of the size the header says, and one byte more only to find
	// an entry longer than that: a bytes.Buffer grown to the size doubled itself at its
	// end, for the room ReadFrom wants before it sees EOF.
	data := make([]byte, size)
	if n, err := io.ReadFull(zr, data); err != nil {
		return nil, fmt.Errorf("an entry of %d bytes where its header says %d: %w", n, size, err)
	}
	if n, _ := zr.Read(make([]byte, 1)); n > 0 {
		return nil, fmt.Errorf("an entry longer than its header's %d bytes", size)
	}
	return data, nil
}

// An inflater reads the zlib stream of a pack entry. Its buffer and its decompressor's
// tables are kept for the next one: a search reads dozens of small objects, and making
// both anew for each was most of what reading one cost.
type inflater struct {
	br *bufio.Reader
	zr io.ReadCloser
}

var inflaters sync.Pool

// newInflater starts reading the zlib stream at at of f. Close gives it back.
func newInflater(f *os.File, at int64) (*inflater, error) {
	src := io.NewSectionReader(f, at, 1<<62)
	in, _ := inflaters.Get().(*inflater)
	if in == nil {
		in = &inflater{br: bufio.NewReaderSize(src, 64<<10)}
	} else {
		in.br.Reset(src)
	}
	var err error
	if in.zr == nil {
		in.zr, err = zlib.NewReader(in.br)
	} else {
		err = in.zr.(zlib.Resetter).Reset(in.br, nil)
	}
	if err != nil {
		return nil, err
	}
	return in, nil
}

func (in *inflater) Read(p []byte) (int, error) { return in.zr.Read(p) }

// Close gives the inflater back, for the next stream.
func (in *inflater) Close() error {
	err := in.zr.Close()
	in.br.Reset(nil)
	inflaters.Put(in)
	return err
}
