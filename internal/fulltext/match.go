package fulltext

import (
	"slices"
	"sort"
)

// phraseIter walks the documents that hold its sources in a row, in one field at least:
// each source a term, or the last the terms of a prefix.
type phraseIter struct {
	srcs   []source
	fields int
	cur    uint32
	tfs    [MaxFields]uint32 // how often the phrase is in each field of the current document
	pos    [][]uint32
}

func newPhraseIter(srcs []source, fields int) *phraseIter {
	p := &phraseIter{srcs: srcs, fields: fields, pos: make([][]uint32, len(srcs))}
	p.settle()
	return p
}

func (p *phraseIter) doc() uint32         { return p.cur }
func (p *phraseIter) tf(field int) uint32 { return p.tfs[field] }
func (p *phraseIter) next()               { p.srcs[0].next(); p.settle() }
func (p *phraseIter) advance(target uint32) {
	if p.cur >= target {
		return
	}
	p.srcs[0].advance(target)
	p.settle()
}

// settle moves on to the first document, from the first source's, that holds the
// phrase.
func (p *phraseIter) settle() {
	for d := p.candidate(); d != end && !p.match(); d = p.nextCandidate() {
	}
}

// candidate moves on to the first document, from the first source's, that holds all
// the phrase's sources, in a row or not, and returns it; match then says whether they
// are in a row there.
func (p *phraseIter) candidate() uint32 {
	p.cur = allAt(p.srcs)
	return p.cur
}

// nextCandidate moves on to the next document that holds all the phrase's sources.
func (p *phraseIter) nextCandidate() uint32 {
	p.srcs[0].next()
	return p.candidate()
}

// match says whether the sources, all on one document, are in a row in a field of it,
// and counts how often in each.
func (p *phraseIter) match() bool {
	found := false
	for f := range p.fields {
		p.tfs[f] = 0
		for _, s := range p.srcs {
			if s.tf(f) == 0 {
				goto nextField
			}
		}
		for i, s := range p.srcs {
			p.pos[i] = s.positions(f, p.pos[i][:0])
		}
		for _, start := range p.pos[0] {
			in := true
			for i := 1; i < len(p.srcs) && in; i++ {
				_, in = slices.BinarySearch(p.pos[i], start+uint32(i))
			}
			if in {
				p.tfs[f]++
			}
		}
		found = found || p.tfs[f] > 0
	nextField:
	}
	return found
}

// allAt moves its iterators on to the first document all of them hold, from the
// first's, and returns it, or end.
func allAt[I iterator](its []I) uint32 {
	target := its[0].doc()
	for target != end {
		agreed := true
		for _, it := range its[1:] {
			it.advance(target)
			if d := it.doc(); d != target {
				its[0].advance(d)
				target, agreed = its[0].doc(), false
				break
			}
		}
		if agreed {
			return target
		}
	}
	return end
}

// andIter walks the documents all its parts match.
type andIter struct {
	parts []iterator
	cur   uint32
}

func (a *andIter) doc() uint32 { return a.cur }
func (a *andIter) next()       { a.parts[0].next(); a.cur = allAt(a.parts) }
func (a *andIter) advance(target uint32) {
	if a.cur >= target {
		return
	}
	a.parts[0].advance(target)
	a.cur = allAt(a.parts)
}

// orIter walks the documents any of its parts matches.
type orIter struct {
	parts []iterator
	cur   uint32
}

func (o *orIter) settle() {
	o.cur = end
	for _, p := range o.parts {
		o.cur = min(o.cur, p.doc())
	}
}

func (o *orIter) doc() uint32 { return o.cur }

func (o *orIter) next() {
	for _, p := range o.parts {
		if p.doc() == o.cur {
			p.next()
		}
	}
	o.settle()
}

func (o *orIter) advance(target uint32) {
	for _, p := range o.parts {
		p.advance(target)
	}
	o.settle()
}

// notIter walks the documents its first part matches and its second does not.
type notIter struct {
	yes, no iterator
	cur     uint32
}

func (n *notIter) settle() {
	for n.cur = n.yes.doc(); n.cur != end; n.cur = n.yes.doc() {
		n.no.advance(n.cur)
		if n.no.doc() != n.cur {
			return
		}
		n.yes.next()
	}
}

func (n *notIter) doc() uint32 { return n.cur }
func (n *notIter) next()       { n.yes.next(); n.settle() }
func (n *notIter) advance(target uint32) {
	if n.cur >= target {
		return
	}
	n.yes.advance(target)
	n.settle()
}

// listIter walks a sorted list of documents.
type listIter struct {
	docs []uint32
	i    int
}

func (l *listIter) doc() uint32 {
	if l.i < len(l.docs) {
		return l.docs[l.i]
	}
	return end
}

func (l *listIter) next() { l.i++ }

func (l *listIter) advance(target uint32) {
	rest := l.docs[l.i:]
	l.i += sort.Search(len(rest), func(i int) bool { return rest[i] >= target })
}

// emptyIter matches nothing.
type emptyIter struct{}

func (emptyIter) doc() uint32    { return end }
func (emptyIter) next()          {}
func (emptyIter) advance(uint32) {}
func (emptyIter) tf(int) uint32  { return 0 }
func (emptyIter) positions(_ int, into []uint32) []uint32 {
	return into
}
