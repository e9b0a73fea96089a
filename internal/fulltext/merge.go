package fulltext

import (
	"container/heap"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"strings"
)

// Merge writes at path one segment of the live documents of segs, in their order, and
// of all their names, and says how many documents it holds. It holds one term's
// postings at a time, the documents' columns and the names. The segments must have the
// same fields and keys.
func Merge(segs []*Segment, path string) (docs int, err error) {
	defer recoverDamage(&err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true)) // a mapped file cut short under it
	if len(segs) == 0 {
		return 0, fmt.Errorf("fulltext: nothing to merge")
	}
	fields, keys := int(segs[0].f.fields), int(segs[0].f.keys)
	c := &columns{norms: make([][]uint8, fields), codes: make([][]uint32, keys), values: make([][]string, keys),
		totals: make([]uint64, fields)}
	dicts := make([]map[string]uint32, keys)
	for k := range dicts {
		dicts[k] = map[string]uint32{}
	}
	// Each segment's documents, numbered anew after those of the segments before it.
	renumber := make([][]uint32, len(segs))
	for i, s := range segs {
		if int(s.f.fields) != fields || int(s.f.keys) != keys {
			return 0, fmt.Errorf("fulltext: merging segments of %d and %d fields", fields, s.f.fields)
		}
		renumber[i] = make([]uint32, s.f.docs)
		for n := range s.f.docs {
			if s.isDead(n) {
				renumber[i][n] = end
				continue
			}
			renumber[i][n] = uint32(len(c.ids))
			c.ids, c.times = append(c.ids, s.ID(n)), append(c.times, s.Time(n))
			for f := range fields {
				c.norms[f] = append(c.norms[f], s.norm(f, n))
			}
			for k := range keys {
				v := s.Key(k, n)
				code, ok := dicts[k][v]
				if !ok {
					code = uint32(len(c.values[k]))
					dicts[k][v], c.values[k] = code, append(c.values[k], v)
				}
				c.codes[k] = append(c.codes[k], code)
			}
		}
		// The token totals count the dead documents too, as the segment did: they only
		// weigh a field's average length.
		for f, t := range s.totals() {
			c.totals[f] += t
		}
		// Names stay whatever their ids' documents: a document is dead when its id's
		// words are indexed again elsewhere, and the name names the id.
		s.eachName(func(name uint64, id int64) { c.names = append(c.names, named{name, id}) })
	}
	w, err := newSegmentWriter(filepath.Dir(path), fields)
	if err != nil {
		return 0, err
	}
	defer w.discard()
	var damaged error
	terms := &termHeap{}
	for i, s := range segs {
		if s.f.terms > 0 {
			heap.Push(terms, termCursor{seg: i, s: s})
		}
	}
	var dt docTerm
	for terms.Len() > 0 {
		t := (*terms)[0].text()
		tb := &termBuild{last: -1, open: blockEntry{minNorm: fieldBytesMax}}
		for terms.Len() > 0 && (*terms)[0].text() == t {
			cur := heap.Pop(terms).(termCursor)
			it := newTermIter(cur.s, cur.n, &damaged)
			for ; it.doc() != end; it.next() {
				n := renumber[cur.seg][it.doc()]
				if n == end {
					continue
				}
				var norms [MaxFields]uint8
				for f := range fields {
					dt.pos[f] = it.positions(f, dt.pos[f][:0])
					norms[f] = c.norms[f][n]
				}
				tb.add(int64(n), &dt, &norms, fields)
			}
			if damaged != nil {
				return 0, damaged
			}
			if cur.n++; cur.n < int(cur.s.f.terms) {
				heap.Push(terms, cur)
			}
		}
		if tb.df > 0 {
			if err := w.term(t, tb); err != nil {
				return 0, err
			}
		}
	}
	return len(c.ids), w.finish(path, c)
}

// termCursor is where a merge stands in a segment's terms.
type termCursor struct {
	seg int
	s   *Segment
	n   int
}

func (c termCursor) text() string { return c.s.term(c.n) }

// termHeap orders the segments' cursors by term, then by segment.
type termHeap []termCursor

func (h termHeap) Len() int { return len(h) }
func (h termHeap) Less(i, j int) bool {
	if c := strings.Compare(h[i].text(), h[j].text()); c != 0 {
		return c < 0
	}
	return h[i].seg < h[j].seg
}
func (h termHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *termHeap) Push(x any)   { *h = append(*h, x.(termCursor)) }
func (h *termHeap) Pop() any {
	x := (*h)[len(*h)-1]
	*h = (*h)[:len(*h)-1]
	return x
}
