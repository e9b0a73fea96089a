package vcs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
)

// packIdx is a pack's .idx file (version 2), mapped and searched as it lies. go-git
// decodes every index into maps before it reads an object, and on its first read from a
// pack builds a map from offset to id of every object in it: on a year's memory repo
// (1,000,000 files) that was 0.6 s before `agmem status` or a flush could read a commit.
// Here a lookup is a binary search in the id table, reading nothing else.
type packIdx struct {
	data  []byte
	count int
}

// Offsets into a version 2 .idx: magic and version, then the fan-out table (for each
// first byte, how many ids start with a byte at most that), then the sorted ids, their
// CRCs, their 4-byte offsets (the top bit set: an index into the 8-byte offsets after).
const (
	idxHeaderLen = 8
	idxFanoutLen = 256 * 4
	idxTableAt   = idxHeaderLen + idxFanoutLen
)

var idxMagic = []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}

// errIdxVersion is an .idx of a version other than 2, which git has written since 2009
// (go-git reads no other either).
var errIdxVersion = errors.New("not a version 2 pack index")

// readPackIdx maps an .idx and checks that its tables fit in it. The file is unmapped
// when the packIdx is no longer reachable: nothing keeps a slice of it.
func readPackIdx(path string) (*packIdx, error) {
	data, unmap, err := mapFile(path)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*packIdx, error) {
		unmap()
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) < idxTableAt || !bytes.Equal(data[:idxHeaderLen], idxMagic) {
		return fail(errIdxVersion)
	}
	count := int(binary.BigEndian.Uint32(data[idxHeaderLen+255*4:]))
	// ids, CRCs and short offsets, then the pack's and the index's checksums.
	if len(data) < idxTableAt+count*(20+4+4)+2*20 {
		return fail(errors.New("the index is cut short"))
	}
	x := &packIdx{data: data, count: count}
	runtime.SetFinalizer(x, func(*packIdx) { unmap() })
	return x, nil
}

func (x *packIdx) fanout(b int) int {
	return int(binary.BigEndian.Uint32(x.data[idxHeaderLen+b*4:]))
}

func (x *packIdx) id(i int) []byte { return x.data[idxTableAt+i*20 : idxTableAt+i*20+20] }

func (x *packIdx) crc(i int) uint32 {
	return binary.BigEndian.Uint32(x.data[idxTableAt+x.count*20+i*4:])
}

func (x *packIdx) offset(i int) (int64, error) {
	short := binary.BigEndian.Uint32(x.data[idxTableAt+x.count*24+i*4:])
	if short&0x80000000 == 0 {
		return int64(short), nil
	}
	at := idxTableAt + x.count*28 + int(short&0x7fffffff)*8
	if at+8 > len(x.data)-2*20 {
		return 0, errors.New("read pack index: an offset past the end of the index")
	}
	return int64(binary.BigEndian.Uint64(x.data[at:])), nil
}

// FindOffset is where object h starts in the pack, or plumbing.ErrObjectNotFound.
func (x *packIdx) FindOffset(h plumbing.Hash) (int64, error) {
	i, hi, err := x.lowerBound(h[:])
	if err != nil {
		return 0, err
	}
	if i == hi || !bytes.Equal(x.id(i), h[:]) {
		return 0, plumbing.ErrObjectNotFound
	}
	return x.offset(i)
}

// withPrefix is the first id that starts with p, and how many do, counted up to 2.
func (x *packIdx) withPrefix(p []byte) (h plumbing.Hash, n int, err error) {
	first, hi, err := x.lowerBound(p)
	if err != nil {
		return h, 0, err
	}
	for n < 2 && first+n < hi && bytes.HasPrefix(x.id(first+n), p) {
		n++
	}
	if n > 0 {
		copy(h[:], x.id(first))
	}
	return h, n, nil
}

// lowerBound is where the first id at least p (a byte or more) is, a binary search of
// the ids that start with p's first byte (the fan-out table says which), and where
// those end.
func (x *packIdx) lowerBound(p []byte) (i, hi int, err error) {
	lo, hi := 0, x.fanout(int(p[0]))
	if p[0] > 0 {
		lo = x.fanout(int(p[0]) - 1)
	}
	if lo > hi || hi > x.count {
		return 0, 0, errors.New("read pack index: its fan-out table is out of order")
	}
	return lo + sort.Search(hi-lo, func(i int) bool { return bytes.Compare(x.id(lo+i), p) >= 0 }), hi, nil
}

// entries lists every object the index names, with its offset and CRC, in id order.
func (x *packIdx) entries() ([]idxfile.Entry, error) {
	out := make([]idxfile.Entry, x.count)
	for i := range out {
		at, err := x.offset(i)
		if err != nil {
			return nil, err
		}
		copy(out[i].Hash[:], x.id(i))
		out[i].Offset, out[i].CRC32 = uint64(at), x.crc(i)
	}
	return out, nil
}
