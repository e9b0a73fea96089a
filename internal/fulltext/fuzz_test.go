package fulltext

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: any input is a query or ErrQuery, and a query's tree holds a phrase.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{`a b OR "c d" NOT e*`, "((a", `"`, "AND", "src/app.go", "Ünï*", ")(", "a NOT NOT b"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		q, err := Parse(in)
		if err != nil {
			if !errors.Is(err, ErrQuery) {
				t.Fatalf("Parse(%q): %v, not ErrQuery", in, err)
			}
			return
		}
		n := 0
		walk(q.root, func(*phrase) { n++ })
		if n == 0 || len(q.Words) == 0 {
			t.Fatalf("Parse(%q): a query of %d phrases, %d words", in, n, len(q.Words))
		}
	})
}

// FuzzSegment: a segment's bytes, changed anyhow, are refused, or searched, merged and
// read without a panic.
func FuzzSegment(f *testing.F) {
	c := newCorpus(f, rand.New(rand.NewPCG(9, 10)), 300, 1)
	names := NewBuilder(3, 2)
	for i := range 300 {
		names.Name(uint64(i)*7919, int64(i))
	}
	path := filepath.Join(f.TempDir(), "seg")
	if _, err := Merge(append(c.segs, written(f, names)), path); err != nil {
		f.Fatal(err)
	}
	whole, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint32(100), byte(7), uint32(0))
	f.Add(uint32(len(whole)/2), byte(0xff), uint32(len(whole)))
	f.Fuzz(func(t *testing.T, at uint32, b byte, cut uint32) {
		data := append([]byte(nil), whole...)
		data[int(at)%len(data)] = b
		if int(cut) < len(data) {
			data = data[:cut]
		}
		s, err := openBytes(data)
		if err != nil {
			return
		}
		for _, text := range []string{"alpha", `"beta gamma"`, "del*", "pi OR rho NOT tau", "zzyzx", `"quokka alpha" OR aardvark`} {
			q, _ := Parse(text)
			Search([]*Segment{s}, q, Options{Weights: testWeights, Limit: 3, Filter: Filter{Keys: [][]string{{"codex"}}}})
		}
		for n := range uint32(s.Docs()) {
			s.ID(n)
			s.Key(0, n)
		}
		for _, name := range []uint64{0, 7919, 7919 * 150, 7919 * 299, 1} {
			s.Named(name)
		}
		s.eachName(func(uint64, int64) {})
	})
}
