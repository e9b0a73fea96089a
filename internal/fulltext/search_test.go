package fulltext

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// corpus is documents in segments, as a test builds them, and what they hold, as an
// oracle reads it.
type corpus struct {
	segs  []*Segment
	docs  [][]Doc // by segment
	dead  map[int64]bool
	words []string
	// What the oracle reads: each document's terms, by field, and how many documents
	// of each segment hold each term.
	terms [][][][]string
	held  []map[string]int
}

var testWeights = []float64{4, 1, 2}

// written writes b as a segment file in the test's temporary directory and opens it,
// to be closed when the test ends.
func written(t testing.TB, b *Builder) *Segment {
	t.Helper()
	path := filepath.Join(t.TempDir(), "seg")
	if err := b.Write(path); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// newCorpus builds n random documents of three fields over a small vocabulary, so that
// queries match often and terms fill many blocks, in parts segments.
func newCorpus(t testing.TB, rnd *rand.Rand, n, parts int) *corpus {
	return newCorpusOf(t, rnd, n, parts, []string{"alpha", "alps", "beta", "bet", "gamma", "delta", "deltas", "epsilon", "zeta", "eta",
		"theta", "iota", "kappa", "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "Straße", "über"})
}

// newCorpusOf is newCorpus over the vocabulary words, and a few rare words.
func newCorpusOf(t testing.TB, rnd *rand.Rand, n, parts int, words []string) *corpus {
	// Rare words, in fewer documents than a block holds: most terms of a real index are
	// so, and have no block index. The last term in byte order is one of them.
	rare := []string{"aardvark", "quokka", "wombat", "zzyzx"}
	c := &corpus{words: append(slices.Clone(words), rare...), dead: map[int64]bool{}}
	id := int64(1000)
	for range parts {
		b := NewBuilder(3, 2)
		var docs []Doc
		for range n / parts {
			fields := make([]string, 3)
			for f := range fields {
				var sb strings.Builder
				for range rnd.IntN([]int{4, 60, 8}[f]) {
					sb.WriteString(words[rnd.IntN(len(words))])
					sb.WriteString([]string{" ", ", ", "/", "_", "\n"}[rnd.IntN(5)])
				}
				if rnd.IntN(40) == 0 {
					sb.WriteString(rare[rnd.IntN(len(rare))])
				}
				fields[f] = sb.String()
			}
			d := Doc{ID: id, Fields: fields, Time: int64(rnd.IntN(100)), Keys: []string{
				[]string{"claude", "codex", "gemini"}[rnd.IntN(3)], fmt.Sprint("s", rnd.IntN(300))}}
			id += int64(1 + rnd.IntN(3))
			b.Add(d)
			docs = append(docs, d)
		}
		s := written(t, b)
		c.segs = append(c.segs, s)
		c.docs = append(c.docs, docs)
		held := map[string]int{}
		var terms [][][]string
		for _, d := range docs {
			fields := make([][]string, len(d.Fields))
			seen := map[string]bool{}
			for f, text := range d.Fields {
				fields[f] = TermsOf(text)
				for _, w := range fields[f] {
					seen[w] = true
				}
			}
			for w := range seen {
				held[w]++
			}
			terms = append(terms, fields)
		}
		c.terms, c.held = append(c.terms, terms), append(c.held, held)
	}
	return c
}

func (c *corpus) kill(ids ...int64) {
	set := map[int64]bool{}
	for _, id := range ids {
		set[id], c.dead[id] = true, true
	}
	for _, s := range c.segs {
		s.Kill(set)
	}
}

// oracle searches the corpus by reading every document.
func (c *corpus) oracle(q *Query, o Options) Result {
	live := 0.0
	var totals [3]float64
	for p, docs := range c.docs {
		for i, d := range docs {
			if !c.dead[d.ID] {
				live++
			}
			for f, terms := range c.terms[p][i] {
				totals[f] += float64(len(terms))
			}
		}
	}
	idf := map[*phrase]float64{}
	walk(q.root, func(p *phrase) {
		for i, t := range p.terms {
			dfs := map[string]float64{}
			for _, held := range c.held {
				for w, n := range held {
					if w == t || p.prefix && i == len(p.terms)-1 && strings.HasPrefix(w, t) {
						dfs[w] += float64(n)
					}
				}
			}
			df := 0.0
			for _, n := range dfs {
				df = max(df, n)
			}
			df = min(df, live)
			idf[p] += math.Log(1 + (live-df+0.5)/(df+0.5))
		}
	})
	var res Result
	top := &hits{limit: o.Limit}
	for p, docs := range c.docs {
		for i, d := range docs {
			fields := c.terms[p][i]
			if c.dead[d.ID] || !passes(d, o.Filter) || !matches(q.root, fields) {
				continue
			}
			res.Total++
			score := 0.0
			walk(q.root, func(p *phrase) {
				in := 0.0
				for f, terms := range fields {
					if tf := float64(count(p, terms)); tf > 0 {
						avg := max(totals[f]/live, 1)
						norm := byteNorm(normByte(uint32(len(terms))))
						in += o.Weights[f] * tf * (k1 + 1) / (tf + k1*(1-b+b*norm/avg))
					}
				}
				score += idf[p] * in
			})
			top.offer(d.ID, score)
		}
	}
	res.Hits = top.sorted()
	max := max(o.MaxCount, o.Limit)
	if res.Total > max {
		res.Total, res.More = max, true
	}
	res.More = res.More || res.Total > len(res.Hits)
	return res
}

func passes(d Doc, f Filter) bool {
	for k, values := range f.Keys {
		if values != nil && !slices.Contains(values, d.Keys[k]) {
			return false
		}
	}
	return (f.From == 0 || d.Time >= f.From) && (f.To == 0 || d.Time < f.To) && (f.IDs == nil || f.IDs[d.ID])
}

func matches(n node, fields [][]string) bool {
	switch n := n.(type) {
	case *phrase:
		for _, terms := range fields {
			if count(n, terms) > 0 {
				return true
			}
		}
		return false
	case *operator:
		l, r := matches(n.left, fields), matches(n.right, fields)
		switch n.op {
		case "AND":
			return l && r
		case "OR":
			return l || r
		}
		return l && !r
	}
	return false
}

// count is how often the phrase is in a field's terms.
func count(p *phrase, terms []string) int {
	n := 0
	for start := range terms {
		in := start+len(p.terms) <= len(terms)
		for i := 0; in && i < len(p.terms); i++ {
			w := terms[start+i]
			in = w == p.terms[i] || p.prefix && i == len(p.terms)-1 && strings.HasPrefix(w, p.terms[i])
		}
		if in {
			n++
		}
	}
	return n
}

func sameResults(t *testing.T, what string, got, want Result) {
	t.Helper()
	if got.Total != want.Total || got.More != want.More || len(got.Hits) != len(want.Hits) {
		t.Fatalf("%s: %d hits, total %d, more %v; want %d, %d, %v", what, len(got.Hits), got.Total, got.More,
			len(want.Hits), want.Total, want.More)
	}
	for i := range got.Hits {
		g, w := got.Hits[i], want.Hits[i]
		if g.ID != w.ID || math.Abs(g.Score-w.Score) > 1e-9*math.Max(1, math.Abs(w.Score)) {
			t.Fatalf("%s: hit %d is %+v, want %+v\ngot  %v\nwant %v", what, i, g, w, got.Hits, want.Hits)
		}
	}
}

// randomQuery is a query of words, phrases, prefixes and operators over the words.
func randomQuery(rnd *rand.Rand, words []string, depth int) string {
	if depth == 0 || rnd.IntN(3) == 0 {
		w := strings.ToLower(words[rnd.IntN(len(words))])
		switch rnd.IntN(5) {
		case 0:
			return `"` + w + " " + strings.ToLower(words[rnd.IntN(len(words))]) + `"`
		case 1:
			r := []rune(w)
			return string(r[:1+rnd.IntN(len(r))]) + "*"
		}
		return w
	}
	l, r := randomQuery(rnd, words, depth-1), randomQuery(rnd, words, depth-1)
	return "(" + l + " " + []string{"AND", "OR", "NOT", ""}[rnd.IntN(4)] + " " + r + ")"
}

// TestSearchAgainstAnOracle runs random queries over random documents and holds each
// result to a search that reads every document: the same documents, counted the same,
// scored the same, in the same order.
func TestSearchAgainstAnOracle(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	c := newCorpus(t, rnd, 3000, 3)
	c.kill(1000, 1010, 2500, 4001)
	filters := []Filter{{}, {Keys: [][]string{{"codex"}}}, {Keys: [][]string{nil, {"s1", "s2", "s3"}}},
		{From: 20, To: 70}, {IDs: map[int64]bool{1003: true, 1500: true, 1700: true, 2222: true}}}
	for i := range 400 {
		text := randomQuery(rnd, c.words, 3)
		q, err := Parse(text)
		if err != nil {
			t.Fatalf("Parse(%q): %v", text, err)
		}
		o := Options{Weights: testWeights, Limit: 1 + rnd.IntN(30), MaxCount: []int{0, 100, 100000}[rnd.IntN(3)],
			Filter: filters[i%len(filters)]}
		got, err := Search(c.segs, q, o)
		if err != nil {
			t.Fatalf("Search(%q): %v", text, err)
		}
		sameResults(t, fmt.Sprintf("%q, %+v", text, o.Filter), got, c.oracle(q, o))
	}
}

// TestPrefixOfManyTermsAgainstAnOracle: a prefix that stands for hundreds of terms
// (walked by a heap of them) matches, counts and scores as a search of every document
// does, alone and beside other words.
func TestPrefixOfManyTermsAgainstAnOracle(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	words := []string{"alpha", "beta"}
	for i := range 600 {
		words = append(words, fmt.Sprintf("p%03d", i))
	}
	c := newCorpusOf(t, rnd, 2000, 2, words)
	c.kill(1000, 1500)
	for _, text := range []string{"p*", "p1*", "p* AND alpha", "alpha NOT p2*", "p1* OR p2*", `"alpha p*"`, `"p0* beta"`} {
		q, err := Parse(text)
		if err != nil {
			t.Fatalf("Parse(%q): %v", text, err)
		}
		for _, limit := range []int{1, 20} {
			o := Options{Weights: testWeights, Limit: limit, MaxCount: 100000}
			got, err := Search(c.segs, q, o)
			if err != nil {
				t.Fatalf("Search(%q): %v", text, err)
			}
			sameResults(t, text, got, c.oracle(q, o))
		}
	}
}

// TestOneTermSkipsBlocks checks that a query of one common term reads fewer postings
// than it matches, and gives what a search of every posting gives.
func TestOneTermSkipsBlocks(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	c := newCorpus(t, rnd, 4000, 1)
	for _, w := range []string{"alpha", "sigma", "tau"} {
		q, _ := Parse(w)
		for _, limit := range []int{1, 10, 100} {
			o := Options{Weights: testWeights, Limit: limit, MaxCount: 10000}
			got, err := Search(c.segs, q, o)
			if err != nil {
				t.Fatal(err)
			}
			sameResults(t, w, got, c.oracle(q, o))
		}
	}
}

// TestOnePhraseAgainstAnOracle runs queries of one phrase, which past MaxCount look at
// a document's positions only when it could make the best: the same results as a search
// that reads every document, whatever the limit, the count and the filter.
func TestOnePhraseAgainstAnOracle(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	c := newCorpus(t, rnd, 3000, 3)
	c.kill(c.docs[0][3].ID, c.docs[1][500].ID, c.docs[2][999].ID)
	filters := []Filter{{}, {Keys: [][]string{{"codex"}}}, {From: 10, To: 60}}
	for i := range 300 {
		w := func() string { return strings.ToLower(c.words[rnd.IntN(len(c.words))]) }
		text := `"` + w() + " " + w() + `"`
		if i%4 == 0 {
			text = `"` + w() + " " + w() + " " + string([]rune(w())[:1]) + `*"`
		}
		q, err := Parse(text)
		if err != nil {
			t.Fatalf("Parse(%q): %v", text, err)
		}
		o := Options{Weights: testWeights, Limit: []int{1, 5, 50}[i%3], MaxCount: []int{0, 10, 100000}[rnd.IntN(3)],
			Filter: filters[rnd.IntN(len(filters))]}
		got, err := Search(c.segs, q, o)
		if err != nil {
			t.Fatalf("Search(%q): %v", text, err)
		}
		sameResults(t, fmt.Sprintf("%q, %+v", text, o), got, c.oracle(q, o))
	}
}

// TestSkipsWithMostDead searches a segment most of whose documents that hold the
// words are dead, where their df, which counts the dead, is above the documents
// searched: what a search that skips documents by their bounds gives is what one that
// skips none gives (one that names every document, which scores each).
func TestSkipsWithMostDead(t *testing.T) {
	b := NewBuilder(3, 2)
	dead, every := map[int64]bool{}, map[int64]bool{}
	for i := range 400 {
		every[int64(i)] = true
		text := "foo bar" + strings.Repeat(" foo", i%5) + strings.Repeat(" bar foo", i%3) + strings.Repeat(" filler", i%7)
		b.Add(Doc{ID: int64(i), Fields: []string{text, "", ""}, Keys: []string{"codex", "s"}})
		if i%4 != 0 {
			dead[int64(i)] = true
		}
	}
	s := written(t, b)
	s.Kill(dead)
	for _, text := range []string{"foo", `"foo bar"`, `"bar foo"`} {
		q, _ := Parse(text)
		for _, limit := range []int{1, 3} {
			got, err := Search([]*Segment{s}, q, Options{Weights: testWeights, Limit: limit, MaxCount: limit})
			if err != nil {
				t.Fatal(err)
			}
			all, err := Search([]*Segment{s}, q, Options{Weights: testWeights, Limit: limit, MaxCount: 1000, Filter: Filter{IDs: every}})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Hits, all.Hits) {
				t.Errorf("%s, limit %d: %v, want %v", text, limit, got.Hits, all.Hits)
			}
		}
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a b", "(a AND b)"},
		{"a b OR c", "((a AND b) OR c)"},
		{"a OR b c", "(a OR (b AND c))"},
		{"a NOT b c", "((a NOT b) AND c)"},
		{`"a b" c*`, `("a b" AND c*)`},
		{`"state lo*"`, `"state lo"*`},
		{`"lo* state" "x* "`, `("lo state" AND x*)`},
		{`"state lo"* b`, `("state lo"* AND b)`},
		{`"state *" "*"*`, `state`},
		{"src/app.go", `"src app go"`},
		{"(a OR b) NOT c", "((a OR b) NOT c)"},
		{"Straße Über*", "(strasse AND uber*)"},
		{"日本語 テキスト", `("日本 本語" AND "テキ キス スト")`},
		{"語", "語*"},
		{"(a OR b*) AND NOT c", "((a OR b*) NOT c)"},
		{"a AND NOT b NOT c d", "(((a NOT b) NOT c) AND d)"},
		{"a b AND NOT c OR d", "(((a AND b) NOT c) OR d)"},
	} {
		q, err := Parse(tc.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.in, err)
		}
		if got := show(q.root); got != tc.want {
			t.Errorf("Parse(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"", "the query is empty"},
		{`"a`, `a " is not closed`},
		{"OR a", "OR needs something to its left"},
		{"NOT a", "NOT needs something to its left"},
		{"a AND NOT", "the query ends in an operator"},
		{"a AND NOT OR b", "OR needs something to its left"},
		{"a AND", "the query ends in an operator"},
		{"(a", "a ( is not closed"},
		{"a)", "a ) closes nothing, or an empty group"},
		{"()", "a ) closes nothing, or an empty group"},
		{"// --", "the query holds no word to look for"},
		{strings.Repeat("a", MaxQuery+1), "longer than"},
		{"\xff", "not UTF-8"},
	} {
		if _, err := Parse(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%.20q) = %v, want %q", tc.in, err, tc.want)
		}
	}
}

func show(n node) string {
	switch n := n.(type) {
	case *phrase:
		s := strings.Join(n.terms, " ")
		if len(n.terms) > 1 {
			s = `"` + s + `"`
		}
		if n.prefix {
			s += "*"
		}
		return s
	case *operator:
		return "(" + show(n.left) + " " + n.op + " " + show(n.right) + ")"
	}
	return "?"
}

func TestTerms(t *testing.T) {
	got := TermsOf("Hello, WORLD! parse_config src/app.go Ünïcode 42x " + strings.Repeat("z", 100) + " ReadAll Éclair " + strings.Repeat("Q", 70))
	want := []string{"hello", "world", "parse", "config", "src", "app", "go", "unicode", "42x", strings.Repeat("z", MaxTermBytes),
		"readall", "eclair", strings.Repeat("q", MaxTermBytes)}
	if !slices.Equal(got, want) {
		t.Errorf("TermsOf = %q, want %q", got, want)
	}
	// What a user types finds what was written otherwise: an accent typed as a mark
	// after its letter (as macOS names files), full-width forms, a ligature, cases that
	// fold beyond lower case.
	for _, same := range [][2]string{
		{"U\u0308berpru\u0308fung", "Überprüfung"},
		{"na\u0131ve\u0301", "NAIVE"},
		{"ｓｔａｔｅ １２３", "state 123"},
		{"ﬁle", "file"},
		{"Straße", "STRASSE"},
		{"ΟΔΟΣ", "οδος"},
		{"हिन्दी", "हिन्दी"},
	} {
		a, b := TermsOf(unquote(same[0])), TermsOf(same[1])
		if !slices.Equal(a, b) || len(a) == 0 {
			t.Errorf("TermsOf(%q) = %q, TermsOf(%q) = %q: want the same", same[0], a, same[1], b)
		}
	}
	// Words of scripts written without spaces are pairs of characters, each where it is
	// in the text, with the marks after it; a mark alone is no term.
	text := "abc日本語テキストdef 한국 字\ufe00x \u0301"
	var terms, runs []string
	Terms(unquote(text), func(term string, start, end int) bool {
		terms, runs = append(terms, term), append(runs, unquote(text)[start:end])
		return true
	})
	want = []string{"abc", "日本", "本語", "語テ", "テキ", "キス", "スト", "def", "한국", "字", "x"}
	wantRuns := []string{"abc", "日本", "本語", "語テ", "テキ", "キス", "スト", "def", "한국", unquote("字\ufe00"), "x"}
	if !slices.Equal(terms, want) || !slices.Equal(runs, wantRuns) {
		t.Errorf("Terms = %q at %q, want %q at %q", terms, runs, want, wantRuns)
	}
}

// No term is longer than MaxTermBytes, however many marks follow a character of a
// pair: a segment keeps a term's length in a byte, and a term of 256 bytes read back
// as "" hid half the terms of its segment from their searches.
func TestNoTermTooLong(t *testing.T) {
	text := "日" + strings.Repeat("\u0489", 2) + strings.Repeat("\u20dd", 83) + " 한 " + strings.Repeat("e\u20dd", 100)
	Terms(unquote(text), func(term string, _, _ int) bool {
		if len(term) > MaxTermBytes || term == "" {
			t.Errorf("term of %d bytes: %q", len(term), term)
		}
		return true
	})
}

func unquote(s string) string {
	u, err := strconv.Unquote(`"` + s + `"`)
	if err != nil {
		panic(err)
	}
	return u
}

// Each document's id reads back as given, in 4 bytes where the ids, less the least of
// them, fit, and in 8 where they do not: whatever their order and sign.
func TestIDsKept(t *testing.T) {
	for _, c := range []struct {
		ids   []int64
		width uint64
	}{
		{[]int64{7}, 4},
		{[]int64{5, 5 + math.MaxUint32, 6}, 4},
		{[]int64{5, 5 + math.MaxUint32 + 1}, 8},
		{[]int64{9, 3, 1 << 40, -2}, 8},
		{[]int64{math.MaxInt64, 0, math.MinInt64, -1}, 8},
		{[]int64{-7, -9}, 4},
	} {
		b := NewBuilder(1, 0)
		for _, id := range c.ids {
			b.Add(Doc{ID: id, Fields: []string{"word"}})
		}
		s := written(t, b)
		var got []int64
		for n := range s.Docs() {
			got = append(got, s.ID(uint32(n)))
		}
		if !slices.Equal(got, c.ids) || s.ids.width != c.width {
			t.Errorf("ids %v: read back as %v, %d bytes each; want %d", c.ids, got, s.ids.width, c.width)
		}
	}
}

// Names find their ids: ids of documents or not, several names of an id, one name of
// several ids, ids past 4 bytes; in a segment of no documents; and after a merge, which
// keeps them all, those of dead documents too.
func TestNamesKept(t *testing.T) {
	b := NewBuilder(1, 0)
	b.Add(Doc{ID: 10, Fields: []string{"ten"}})
	b.Add(Doc{ID: 11, Fields: []string{"eleven"}})
	b.Name(7, 10)
	b.Name(3, 11)
	b.Name(7, 1<<40) // no document's
	b.Name(math.MaxUint64, 10)
	b.Name(0, 12)
	first := written(t, b)
	only := NewBuilder(1, 0)
	only.Name(7, 2)
	only.Name(5, 3)
	second := written(t, only)
	if second.Docs() != 0 {
		t.Fatalf("a segment of names only holds %d documents", second.Docs())
	}
	first.Kill(map[int64]bool{10: true})
	path := filepath.Join(t.TempDir(), "merged")
	if _, err := Merge([]*Segment{first, second}, path); err != nil {
		t.Fatal(err)
	}
	merged, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer merged.Close()
	for _, c := range []struct {
		s    *Segment
		name uint64
		want []int64
	}{
		{first, 7, []int64{10, 1 << 40}},
		{first, 3, []int64{11}},
		{first, math.MaxUint64, []int64{10}},
		{first, 0, []int64{12}},
		{first, 4, nil},
		{second, 7, []int64{2}},
		{second, 5, []int64{3}},
		{second, 3, nil},
		{merged, 7, []int64{2, 10, 1 << 40}},
		{merged, 5, []int64{3}},
		{merged, math.MaxUint64, []int64{10}},
		{merged, 6, nil},
	} {
		if got, err := c.s.Named(c.name); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Named(%d) = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}

func TestNormByte(t *testing.T) {
	prev := -1.0
	for n := uint32(0); n < 1<<20; n = n*5/4 + 1 {
		v := byteNorm(normByte(n))
		if v < prev {
			t.Fatalf("byteNorm(normByte(%d)) = %v, less than the length before's %v", n, v, prev)
		}
		if n > 0 && math.Abs(v-float64(n))/float64(n) > 0.07 {
			t.Errorf("byteNorm(normByte(%d)) = %v, too far", n, v)
		}
		prev = v
	}
}

// TestMerge merges segments: without dead documents, every search of the one segment is
// the search of the many; with some, the same documents but the dead match.
func TestMerge(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	c := newCorpus(t, rnd, 2000, 4)
	path := filepath.Join(t.TempDir(), "merged")
	if n, err := Merge(c.segs, path); err != nil || n != 2000 {
		t.Fatalf("Merge = %d, %v", n, err)
	}
	merged, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer merged.Close()
	dead := map[int64]bool{}
	for _, d := range c.docs[1][:50] {
		dead[d.ID] = true
	}
	for i := range 200 {
		text := randomQuery(rnd, c.words, 2)
		q, _ := Parse(text)
		o := Options{Weights: testWeights, Limit: 10, MaxCount: 100000, Filter: []Filter{{}, {Keys: [][]string{{"codex"}}}}[i%2]}
		want, err := Search(c.segs, q, o)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Search([]*Segment{merged}, q, o)
		if err != nil {
			t.Fatal(err)
		}
		sameResults(t, text, got, want)
	}

	c.kill(slices.Collect(maps.Keys(dead))...)
	path = filepath.Join(t.TempDir(), "merged-live")
	if n, err := Merge(c.segs, path); err != nil || n != 2000-len(dead) {
		t.Fatalf("Merge of the live = %d, %v", n, err)
	}
	live, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	for range 100 {
		text := randomQuery(rnd, c.words, 2)
		q, _ := Parse(text)
		o := Options{Weights: testWeights, Limit: 100000, MaxCount: 100000}
		want, _ := Search(c.segs, q, o)
		got, err := Search([]*Segment{live}, q, o)
		if err != nil {
			t.Fatal(err)
		}
		if !sameIDs(got.Hits, want.Hits) || got.Total != want.Total {
			t.Fatalf("%s: after the merge %d hits, before %d", text, got.Total, want.Total)
		}
	}
}

func sameIDs(a, b []Hit) bool {
	ids := func(hs []Hit) []int64 {
		var out []int64
		for _, h := range hs {
			out = append(out, h.ID)
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(ids(a), ids(b))
}

// TestDamage reads segments cut short or with bytes overwritten: refused when opened,
// or failing a search with ErrDamaged, never a panic.
func TestDamage(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	c := newCorpus(t, rnd, 600, 1)
	path := filepath.Join(t.TempDir(), "seg")
	if _, err := Merge(c.segs, path); err != nil {
		t.Fatal(err)
	}
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 7, 100, len(whole) / 2, len(whole) - 1} {
		if _, err := openBytes(whole[:n]); !errors.Is(err, ErrDamaged) {
			t.Errorf("a segment cut to %d bytes: %v, want ErrDamaged", n, err)
		}
	}
	queries := []string{"alpha", `"beta gamma"`, "del*", "pi OR rho", "sigma NOT tau"}
	for i := range 300 {
		data := bytes.Clone(whole)
		for range 1 + rnd.IntN(8) {
			data[8+rnd.IntN(len(data)-8)] = byte(rnd.Uint32())
		}
		s, err := openBytes(data)
		if err != nil {
			if !errors.Is(err, ErrDamaged) {
				t.Fatalf("damage %d: Open: %v", i, err)
			}
			continue
		}
		for _, text := range queries {
			q, _ := Parse(text)
			if _, err := Search([]*Segment{s}, q, Options{Weights: testWeights, Limit: 5}); err != nil && !errors.Is(err, ErrDamaged) {
				t.Fatalf("damage %d: Search(%s): %v", i, text, err)
			}
		}
		if _, err := Merge([]*Segment{s}, filepath.Join(t.TempDir(), "m")); err != nil && !errors.Is(err, ErrDamaged) {
			t.Fatalf("damage %d: Merge: %v", i, err)
		}
	}
}

// A query of words side by side has a relaxed form, any of its words; one that says
// how its parts combine, or has one part, has none.
func TestAnyWord(t *testing.T) {
	for in, want := range map[string]string{
		"how do I unlock the state":     "(((((how OR do) OR i) OR unlock) OR the) OR state)",
		`unlock "terraform state" src/`: `((unlock OR "terraform state") OR src)`,
		"unlock":                        "",
		"unlock AND state":              "",
		"unlock OR state":               "",
		"unlock NOT state":              "",
		"(unlock state)":                "",
	} {
		q, err := Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if any, ok := q.AnyWord(); ok {
			got = show(any.root)
		}
		if got != want {
			t.Errorf("AnyWord(%q) = %s, want %s", in, got, want)
		}
	}
}
