package fulltext

import (
	"container/heap"
	"encoding/binary"
	"math"
	"slices"
)

// end is the document of an iterator past its last.
const end = math.MaxUint32

// An iterator walks the documents a part of a query matches, in order. It starts on its
// first; doc is end past the last.
type iterator interface {
	doc() uint32
	next()
	advance(target uint32) // to the first document not before target
}

// A source is an iterator over a term's documents, or over those of a prefix's terms,
// that says where in each field the current document holds it.
type source interface {
	iterator
	tf(field int) uint32
	positions(field int, into []uint32) []uint32
}

// termIter walks one term's postings in one segment.
type termIter struct {
	fields int
	index  []byte // the block index
	data   []byte // the blocks
	pos    []byte // the positions
	blocks int
	df     int
	entry  blockEntry // the current block's
	b      int        // the current block
	left   int        // postings of the block not read yet
	at     int        // where the next posting is in data
	prev   int64      // the document before the next posting
	cur    uint32
	mask   byte
	tfs    [MaxFields]uint32
	// Where the current posting's positions are: positions are read only for a phrase,
	// a posting at a time, past those of the block's postings before it.
	inBlock  int               // the current posting's place in its block; -1 before
	totals   [blockSize]uint32 // each posting read's count over its fields, in the block
	posAt    int               // where the positions of the block's posting posIndex start
	posIndex int
	err      *error // where damage found is told
}

// newTermIter starts on the first document of term number i of s; damage found while
// it is read sets *err.
func newTermIter(s *Segment, i int, err *error) *termIter {
	r := s.record(i)
	fields := int(s.f.fields)
	blocks := (int(r.df) + blockSize - 1) / blockSize
	post, positions := s.sec[secPostings], s.sec[secPositions]
	t := &termIter{fields: fields, blocks: blocks, df: int(r.df), err: err, cur: end}
	var indexLen uint64
	var last blockEntry
	switch {
	case blocks == 1:
		last = oneBlock(s, i, r)
	case blocks > 1:
		indexLen = uint64(blocks * blockEntrySize(fields))
		if r.postings > uint64(len(post)) || indexLen > uint64(len(post))-r.postings {
			*err = ErrDamaged
			return t
		}
		t.index = post[r.postings : r.postings+indexLen]
		readBlockEntry(t.index[(blocks-1)*blockEntrySize(fields):], fields, &last)
	}
	// Each sum compared as what is left past its start, which a damaged record's
	// offsets near 2^64 cannot wrap.
	if blocks == 0 || r.postings > uint64(len(post)) || indexLen+uint64(last.end) > uint64(len(post))-r.postings ||
		r.positions > uint64(len(positions)) || uint64(last.posEnd) > uint64(len(positions))-r.positions {
		*err = ErrDamaged
		return t
	}
	t.entry = last
	t.data = post[r.postings+indexLen : r.postings+indexLen+uint64(last.end)]
	t.pos = positions[r.positions : r.positions+uint64(last.posEnd)]
	t.openBlock(0)
	t.next()
	return t
}

// oneBlock is the entry of term i's one block, which has none in the file: it ends
// where the next term's postings and positions begin (a damaged file's past its
// section, which newTermIter finds), and bounds a score by nothing.
func oneBlock(s *Segment, i int, r termRecord) blockEntry {
	end, posEnd := uint64(len(s.sec[secPostings])), uint64(len(s.sec[secPositions]))
	if i+1 < int(s.f.terms) {
		next := s.record(i + 1)
		end, posEnd = next.postings, next.positions
	}
	e := blockEntry{last: math.MaxUint32 - 1, end: math.MaxUint32, posEnd: math.MaxUint32, maxTF: fieldBytesMax}
	if end >= r.postings && end-r.postings < math.MaxUint32 && posEnd >= r.positions && posEnd-r.positions < math.MaxUint32 {
		e.end, e.posEnd = uint32(end-r.postings), uint32(posEnd-r.positions)
	}
	return e
}

// openBlock makes block b the current one, before its first posting.
func (t *termIter) openBlock(b int) {
	t.b = b
	if t.index != nil { // else its one block's entry is the iterator's from the start
		readBlockEntry(t.index[b*blockEntrySize(t.fields):], t.fields, &t.entry)
	}
	t.left = blockSize
	if b == t.blocks-1 && t.df%blockSize != 0 {
		t.left = t.df % blockSize
	}
	t.at, t.prev, t.posAt = 0, -1, 0
	if b > 0 {
		var before blockEntry
		readBlockEntry(t.index[(b-1)*blockEntrySize(t.fields):], t.fields, &before)
		t.at, t.prev, t.posAt = int(before.end), int64(before.last), int(before.posEnd)
	}
	t.inBlock, t.posIndex = -1, 0
}

func (t *termIter) doc() uint32 { return t.cur }

func (t *termIter) damaged() {
	*t.err = ErrDamaged
	t.cur, t.left, t.b = end, 0, t.blocks
}

func (t *termIter) next() {
	if t.left == 0 {
		if t.b+1 >= t.blocks {
			t.cur = end
			return
		}
		t.openBlock(t.b + 1)
	}
	v, n := binary.Uvarint(t.data[min(t.at, len(t.data)):])
	if n <= 0 || t.at+n > len(t.data) {
		t.damaged()
		return
	}
	t.at += n
	delta, code := v>>3, int(v&7)
	doc := t.prev + int64(delta)
	if doc >= end || delta == 0 || code != manyFields && code > t.fields {
		t.damaged()
		return
	}
	total := uint32(0)
	switch {
	case code < t.fields:
		t.tfs = [MaxFields]uint32{}
		t.mask, t.tfs[code], total = 1<<code, 1, 1
	case code == manyFields:
		if t.mask, total = t.fieldCounts(); total == 0 {
			t.damaged()
			return
		}
	default: // the number of fields, below manyFields
		if t.mask, total = t.oneFieldCount(); total == 0 {
			t.damaged()
			return
		}
	}
	t.inBlock++
	t.totals[t.inBlock] = total
	t.left--
	t.prev, t.cur = doc, uint32(doc)
}

// oneFieldCount reads the field and count of a posting whose one field holds the term
// more than once into tfs; a total of 0 for a damaged one.
func (t *termIter) oneFieldCount() (mask byte, total uint32) {
	v, n := binary.Uvarint(t.data[min(t.at, len(t.data)):])
	if n <= 0 || v/uint64(t.fields) > math.MaxUint32-2 {
		return 0, 0
	}
	tf := v/uint64(t.fields) + 2
	t.at += n
	f := int(v % uint64(t.fields))
	t.tfs = [MaxFields]uint32{}
	t.tfs[f] = uint32(tf)
	return 1 << f, uint32(tf)
}

// fieldCounts reads a posting's byte of fields and their counts into tfs; a total of 0
// for a damaged one.
func (t *termIter) fieldCounts() (mask byte, total uint32) {
	if t.at >= len(t.data) {
		return 0, 0
	}
	mask = t.data[t.at]
	t.at++
	for f := range t.fields {
		t.tfs[f] = 0
		if mask&(1<<f) == 0 {
			continue
		}
		tf, n := binary.Uvarint(t.data[min(t.at, len(t.data)):])
		if n <= 0 || tf == 0 || tf > math.MaxUint32 {
			return 0, 0
		}
		t.at += n
		t.tfs[f] = uint32(tf)
		total += uint32(tf)
	}
	return mask, total
}

func (t *termIter) advance(target uint32) {
	if t.cur >= target {
		return // end too
	}
	if target > t.entry.last {
		// Past this block: find the first whose last document is not before target.
		b := t.b + 1
		size := blockEntrySize(t.fields)
		lo, hi := b, t.blocks
		for lo < hi {
			m := (lo + hi) / 2
			if binary.LittleEndian.Uint32(t.index[m*size:]) < target {
				lo = m + 1
			} else {
				hi = m
			}
		}
		if lo >= t.blocks {
			t.cur, t.left, t.b = end, 0, t.blocks-1
			return
		}
		t.openBlock(lo)
	}
	for t.next(); t.cur < target; t.next() {
	}
}

func (t *termIter) tf(field int) uint32 { return t.tfs[field] }

// positions appends to into where field holds the term in the current document.
func (t *termIter) positions(field int, into []uint32) []uint32 {
	if t.mask&(1<<field) == 0 {
		return into
	}
	// Past the positions of the block's postings before the current one.
	for ; t.posIndex < t.inBlock; t.posIndex++ {
		for range t.totals[t.posIndex] {
			_, n := binary.Uvarint(t.pos[min(t.posAt, len(t.pos)):])
			if n <= 0 {
				t.damaged()
				return into
			}
			t.posAt += n
		}
	}
	at := t.posAt
	for f := range field {
		for range t.tfs[f] {
			_, n := binary.Uvarint(t.pos[min(at, len(t.pos)):])
			if n <= 0 {
				t.damaged()
				return into
			}
			at += n
		}
	}
	p := uint64(0)
	for range t.tfs[field] {
		d, n := binary.Uvarint(t.pos[min(at, len(t.pos)):])
		if n <= 0 {
			t.damaged()
			return into
		}
		at += n
		p += d
		into = append(into, uint32(p))
	}
	return into
}

// prefixIter walks the documents of any of a prefix's terms, as one term: their union,
// with the counts and positions of those on the current document. The terms past it
// wait in a heap by document, so that a step costs the terms it moves, not all of them:
// a prefix of one letter stands for a thousand terms, and walking each at each document
// took seconds on a year's index.
type prefixIter struct {
	waiting docHeap     // the terms past the current document
	at      []*termIter // those on it
	cur     uint32
}

func newPrefixIter(terms []*termIter) *prefixIter {
	p := &prefixIter{}
	for _, t := range terms {
		if t.doc() != end {
			p.waiting = append(p.waiting, t)
		}
	}
	heap.Init(&p.waiting)
	p.settle()
	return p
}

// settle takes the terms on the next document off the heap.
func (p *prefixIter) settle() {
	p.at, p.cur = p.at[:0], end
	if len(p.waiting) > 0 {
		p.cur = p.waiting[0].doc()
	}
	for len(p.waiting) > 0 && p.waiting[0].doc() == p.cur {
		p.at = append(p.at, heap.Pop(&p.waiting).(*termIter))
	}
}

// wait puts the terms that were on the current document back, those not at their end.
func (p *prefixIter) wait() {
	for _, t := range p.at {
		if t.doc() != end {
			heap.Push(&p.waiting, t)
		}
	}
}

func (p *prefixIter) doc() uint32 { return p.cur }

func (p *prefixIter) next() {
	for _, t := range p.at {
		t.next()
	}
	p.wait()
	p.settle()
}

func (p *prefixIter) advance(target uint32) {
	if p.cur >= target {
		return
	}
	for _, t := range p.at {
		t.advance(target)
	}
	p.wait()
	for len(p.waiting) > 0 && p.waiting[0].doc() < target {
		t := p.waiting[0]
		if t.advance(target); t.doc() == end {
			heap.Pop(&p.waiting)
		} else {
			heap.Fix(&p.waiting, 0)
		}
	}
	p.settle()
}

func (p *prefixIter) tf(field int) uint32 {
	n := uint32(0)
	for _, t := range p.at {
		n += t.tf(field)
	}
	return n
}

func (p *prefixIter) positions(field int, into []uint32) []uint32 {
	start := len(into)
	for _, t := range p.at {
		into = t.positions(field, into)
	}
	slices.Sort(into[start:])
	return into
}

// docHeap orders terms by their current document (container/heap).
type docHeap []*termIter

func (h docHeap) Len() int           { return len(h) }
func (h docHeap) Less(i, j int) bool { return h[i].doc() < h[j].doc() }
func (h docHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *docHeap) Push(x any)        { *h = append(*h, x.(*termIter)) }
func (h *docHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}
