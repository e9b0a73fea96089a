package fulltext

import (
	"container/heap"
	"math"
	"runtime/debug"
	"slices"
)

// BM25's constants, as SQLite's FTS5 and Lucene take them.
const (
	k1 = 1.2
	b  = 0.75
)

// maxExpansions bounds the terms a prefix stands for in a segment: the first ones, in
// byte order.
const maxExpansions = 1000

// Options say what a search gives back.
type Options struct {
	Weights  []float64 // each field's weight in a score
	Limit    int       // the best this many
	MaxCount int       // counting matches stops past this many; 0: Limit
	Filter   Filter
}

// A Filter leaves out the documents that do not pass it.
type Filter struct {
	Keys     [][]string     // by key, the values a document may have; nil: any
	From, To int64          // its time: From ≤ time < To; 0: no bound
	IDs      map[int64]bool // only these documents, when not nil
}

// Hit is a document found, and its score: BM25, the higher the better.
type Hit struct {
	ID    int64
	Score float64
}

// Result is a search's best documents, best first, and how many matched: Total counts
// up to MaxCount, past which More says there were more.
type Result struct {
	Hits  []Hit
	Total int
	More  bool
}

// Search finds the documents of segs that q matches and pass o's filter, ranked by
// BM25 over the fields as o weighs them (a phrase scores as its terms together, a
// prefix as its commonest term). A segment damaged where the search reads it fails the
// search with ErrDamaged.
func Search(segs []*Segment, q *Query, o Options) (res Result, err error) {
	defer recoverDamage(&err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	if o.MaxCount < o.Limit {
		o.MaxCount = o.Limit
	}
	st := collectStats(segs, q, o.Weights)
	top := &hits{limit: o.Limit}
	for _, s := range segs {
		if err := st.searchSegment(s, q, o, top, &res); err != nil {
			return Result{}, err
		}
	}
	res.Hits = top.sorted()
	if res.Total > o.MaxCount {
		res.Total, res.More = o.MaxCount, true
	}
	res.More = res.More || res.Total > len(res.Hits)
	return res, nil
}

// stats are what scores are made of, over every segment.
type stats struct {
	weights []float64
	docs    float64
	avg     []float64           // each field's length, on average
	idf     map[*phrase]float64 // each phrase's
}

func collectStats(segs []*Segment, q *Query, weights []float64) *stats {
	st := &stats{weights: weights, idf: map[*phrase]float64{}}
	var totals []float64
	for _, s := range segs {
		st.docs += float64(s.Live())
		for f, t := range s.totals() {
			if f >= len(totals) {
				totals = append(totals, 0)
			}
			totals[f] += float64(t)
		}
	}
	for _, t := range totals {
		st.avg = append(st.avg, max(t/max(st.docs, 1), 1))
	}
	walk(q.root, func(p *phrase) {
		idf := 0.0
		for i, t := range p.terms {
			dfs := map[string]float64{} // of each term it stands for, over the segments
			for _, s := range segs {
				if p.prefix && i == len(p.terms)-1 {
					for _, n := range s.withPrefix(t, maxExpansions) {
						dfs[s.term(n)] += float64(s.df(n))
					}
				} else if n := s.find(t); n >= 0 {
					dfs[t] += float64(s.df(n))
				}
			}
			df := 0.0
			for _, n := range dfs {
				df = max(df, n)
			}
			// A segment's df counts its dead documents, which docs does not: at most
			// every document, so that no idf is below 0, where a bound on a score would
			// be one from below, and a search that skips by it wrong.
			df = min(df, st.docs)
			idf += math.Log(1 + (st.docs-df+0.5)/(df+0.5))
		}
		st.idf[p] = idf
	})
	return st
}

// walk calls fn with each phrase of a query's tree.
func walk(n node, fn func(*phrase)) {
	switch n := n.(type) {
	case *phrase:
		fn(n)
	case *operator:
		walk(n.left, fn)
		walk(n.right, fn)
	}
}

// scorer scores the documents of one segment.
type scorer struct {
	st      *stats
	s       *Segment
	fields  int
	k       [MaxFields][256]float64 // by field and norm byte: k1 × (1 - b + b × length / average)
	leaves  []leaf
	filter  func(n uint32) bool
	damaged error
}

// leaf is a phrase's iterator in one segment, and its idf.
type leaf struct {
	it interface {
		iterator
		tf(int) uint32
	}
	idf float64
}

func (st *stats) searchSegment(s *Segment, q *Query, o Options, top *hits, res *Result) error {
	sc := &scorer{st: st, s: s, fields: int(s.f.fields)}
	for f := range sc.fields {
		avg := 1.0
		if f < len(st.avg) {
			avg = st.avg[f]
		}
		for nb := range 256 {
			sc.k[f][nb] = k1 * (1 - b + b*byteNorm(uint8(nb))/avg)
		}
	}
	sc.filter = o.Filter.in(s)
	root := sc.build(q.root)
	if hasOr(q.root) {
		// A document a query's OR matches by one side holds what the other side looks
		// for too, maybe, and it counts: the other side's iterators may have passed it
		// by, so the phrases are scored by iterators of their own.
		sc.leaves = sc.leaves[:0]
		walk(q.root, func(p *phrase) { sc.phrase(p) })
	}
	if sc.damaged != nil {
		return sc.damaged
	}
	if o.Filter.IDs != nil {
		var docs []uint32
		for n := range s.f.docs {
			if o.Filter.IDs[s.ID(n)] {
				docs = append(docs, n)
			}
		}
		root = &andIter{parts: []iterator{&listIter{docs: docs}, root}}
		root.(*andIter).cur = allAt(root.(*andIter).parts)
	}
	if t, ok := root.(*termIter); ok && len(sc.leaves) == 1 {
		sc.bestBlocks(t, top, o, res)
	} else if p, ok := root.(*phraseIter); ok && len(sc.leaves) == 1 {
		sc.bestPhrases(p, top, o, res)
	} else {
		for d := root.doc(); d != end; d = nextDoc(root) {
			if sc.keep(d) {
				res.Total++
				top.offer(s.ID(d), sc.score(d))
			}
		}
	}
	return sc.damaged
}

func nextDoc(it iterator) uint32 {
	it.next()
	return it.doc()
}

// keep says whether document n is searched: not dead, and passes the filter.
func (sc *scorer) keep(n uint32) bool {
	return !sc.s.isDead(n) && (sc.filter == nil || sc.filter(n))
}

// build makes a query tree's iterators over the segment, noting its phrases as leaves.
func (sc *scorer) build(n node) iterator {
	switch n := n.(type) {
	case *phrase:
		return sc.phrase(n)
	case *operator:
		left, right := sc.build(n.left), sc.build(n.right)
		switch n.op {
		case "AND":
			a := &andIter{parts: []iterator{left, right}}
			a.cur = allAt(a.parts)
			return a
		case "OR":
			o := &orIter{parts: []iterator{left, right}}
			o.settle()
			return o
		default:
			not := &notIter{yes: left, no: right}
			not.settle()
			return not
		}
	}
	return emptyIter{}
}

// phrase makes a phrase's iterator, and notes it as a leaf.
func (sc *scorer) phrase(p *phrase) iterator {
	srcs := make([]source, len(p.terms))
	for i, t := range p.terms {
		srcs[i] = sc.source(t, p.prefix && i == len(p.terms)-1)
	}
	var it interface {
		iterator
		tf(int) uint32
	}
	if len(srcs) == 1 {
		it = srcs[0]
	} else {
		it = newPhraseIter(srcs, sc.fields)
	}
	sc.leaves = append(sc.leaves, leaf{it, sc.st.idf[p]})
	return it
}

// hasOr says whether a query's tree holds OR or NOT: where a document matched need not
// stand under every iterator that holds it.
func hasOr(n node) bool {
	op, ok := n.(*operator)
	return ok && (op.op != "AND" || hasOr(op.left) || hasOr(op.right))
}

// source is the iterator of a term, or of the terms a prefix starts.
func (sc *scorer) source(t string, prefix bool) source {
	if !prefix {
		if n := sc.s.find(t); n >= 0 {
			return newTermIter(sc.s, n, &sc.damaged)
		}
		return emptyIter{}
	}
	var terms []*termIter
	for _, n := range sc.s.withPrefix(t, maxExpansions) {
		terms = append(terms, newTermIter(sc.s, n, &sc.damaged))
	}
	if len(terms) == 0 {
		return emptyIter{}
	}
	return newPrefixIter(terms)
}

// score is BM25 of document n, on which the iterators stand.
func (sc *scorer) score(n uint32) float64 {
	score := 0.0
	for _, l := range sc.leaves {
		if l.it.doc() < n {
			l.it.advance(n)
		}
		if l.it.doc() != n {
			continue
		}
		in := 0.0
		for f := range sc.fields {
			if tf := float64(l.it.tf(f)); tf > 0 {
				// satur, as the blocks' bounds: a bound is then never below a score by rounding.
				in += sc.st.weights[f] * satur(tf, sc.k[f][sc.s.norm(f, n)])
			}
		}
		score += l.idf * in
	}
	return score
}

// bestBlocks scores the documents of a query of one term, skipping the blocks whose best
// cannot beat the worst of the best so far; it counts the matches apart, up to
// MaxCount, when dead documents or a filter make its document count no count of them.
func (sc *scorer) bestBlocks(t *termIter, top *hits, o Options, res *Result) {
	idf := sc.leaves[0].idf
	counted := sc.filter == nil && sc.s.deadIDs == 0
	if counted {
		res.Total += t.df
	}
	for t.doc() != end {
		if top.full() {
			bound := 0.0
			for f := range sc.fields {
				if m := t.entry.maxTF[f]; m > 0 {
					tf := float64(m)
					if m == math.MaxUint8 { // or more
						tf = math.Inf(1)
					}
					bound += sc.st.weights[f] * satur(tf, sc.k[f][t.entry.minNorm[f]])
				}
			}
			if idf*bound < top.worst() {
				if !counted {
					sc.countBlock(t, res, o.MaxCount)
				}
				if t.b+1 >= t.blocks {
					break
				}
				t.advance(t.entry.last + 1)
				continue
			}
		}
		d := t.doc()
		if sc.keep(d) {
			if !counted {
				res.Total++
			}
			top.offer(sc.s.ID(d), sc.score(d))
		}
		t.next()
	}
}

// bestPhrases scores the documents of a query of one phrase. Once the matches counted
// are past MaxCount, a document that holds the phrase's terms is looked at for the
// phrase itself (its terms' positions, most of what a phrase costs) only when it could
// beat the worst of the best so far: when its score, were each field to hold the phrase
// as often as the rarest of its terms there, would.
func (sc *scorer) bestPhrases(p *phraseIter, top *hits, o Options, res *Result) {
	idf := sc.leaves[0].idf
	for d := p.candidate(); d != end; d = p.nextCandidate() {
		if !sc.keep(d) {
			continue
		}
		if res.Total > o.MaxCount && top.full() && idf*sc.phraseBound(p, d) < top.worst() {
			continue
		}
		if p.match() {
			res.Total++
			top.offer(sc.s.ID(d), sc.score(d))
		}
	}
}

// phraseBound is what a phrase's score in document d, on which its sources stand, is
// at most, but for its idf: each field's count of it at most its rarest term's there,
// saturated as score saturates it.
func (sc *scorer) phraseBound(p *phraseIter, d uint32) float64 {
	bound := 0.0
	for f := range sc.fields {
		tf := uint32(math.MaxUint32)
		for _, s := range p.srcs {
			tf = min(tf, s.tf(f))
		}
		if tf > 0 {
			bound += sc.st.weights[f] * satur(float64(tf), sc.k[f][sc.s.norm(f, d)])
		}
	}
	return bound
}

// countBlock counts the kept documents of the rest of the block t stands in, while
// the count is below max.
func (sc *scorer) countBlock(t *termIter, res *Result, max int) {
	if res.Total > max {
		return
	}
	last := t.entry.last
	for d := t.doc(); d != end && d <= last; d = t.doc() {
		if sc.keep(d) {
			res.Total++
		}
		if d == last {
			break
		}
		t.next()
	}
}

func satur(tf, k float64) float64 {
	if math.IsInf(tf, 1) {
		return k1 + 1
	}
	return tf * (k1 + 1) / (tf + k)
}

// in is the filter's test of a segment's documents, or nil for none.
func (f Filter) in(s *Segment) func(n uint32) bool {
	var allowed [][]bool // by key, by code
	for k, values := range f.Keys {
		if values == nil || k >= int(s.f.keys) {
			continue
		}
		for len(allowed) <= k {
			allowed = append(allowed, nil)
		}
		known := s.values()[k]
		allowed[k] = make([]bool, len(known))
		for c, v := range known {
			allowed[k][c] = slices.Contains(values, v)
		}
	}
	if allowed == nil && f.From == 0 && f.To == 0 {
		return nil
	}
	return func(n uint32) bool {
		if f.From != 0 || f.To != 0 {
			t := s.Time(n)
			if f.From != 0 && t < f.From || f.To != 0 && t >= f.To {
				return false
			}
		}
		for k, ok := range allowed {
			if ok != nil {
				if c := s.code(k, n); int(c) >= len(ok) || !ok[c] {
					return false
				}
			}
		}
		return true
	}
}

// hits keeps the best documents offered, up to a limit: a heap with the worst on top.
type hits struct {
	limit int
	h     []Hit
}

func (h *hits) Len() int { return len(h.h) }
func (h *hits) Less(i, j int) bool {
	return worse(h.h[i], h.h[j])
}
func (h *hits) Swap(i, j int) { h.h[i], h.h[j] = h.h[j], h.h[i] }
func (h *hits) Push(x any)    { h.h = append(h.h, x.(Hit)) }
func (h *hits) Pop() any {
	x := h.h[len(h.h)-1]
	h.h = h.h[:len(h.h)-1]
	return x
}

// worse orders hits: a lower score, then, of two equal, the later id.
func worse(x, y Hit) bool {
	if x.Score != y.Score {
		return x.Score < y.Score
	}
	return x.ID > y.ID
}

func (h *hits) full() bool { return h.limit > 0 && len(h.h) >= h.limit }

// worst is the lowest score kept, once full.
func (h *hits) worst() float64 { return h.h[0].Score }

func (h *hits) offer(id int64, score float64) {
	hit := Hit{id, score}
	switch {
	case h.limit <= 0:
	case len(h.h) < h.limit:
		heap.Push(h, hit)
	case worse(h.h[0], hit):
		h.h[0] = hit
		heap.Fix(h, 0)
	}
}

// sorted are the hits kept, best first.
func (h *hits) sorted() []Hit {
	out := slices.Clone(h.h)
	slices.SortFunc(out, func(x, y Hit) int {
		switch {
		case worse(y, x):
			return -1
		case worse(x, y):
			return 1
		}
		return 0
	})
	return out
}
