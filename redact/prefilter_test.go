package redact

import (
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/agmem/agmem/internal/testsource"
)

// checkPrefilter fails t unless the prefilter finds in text every offset of every
// rule's keywords, ignoring ASCII case, and nothing else, as keywordOffsets finds them
// byte by byte; a rule that scans the whole text keeps them only when its matches
// start at its keywords.
func checkPrefilter(t *testing.T, text string) {
	t.Helper()
	r := Default()
	r.once.Do(func() { r.pf = newPrefilter(r.rules) })
	got := map[int]hits{}
	for _, h := range r.pf.rules(text, r.rules) {
		got[h.rule] = h
	}
	for i, ru := range r.rules {
		if slices.ContainsFunc(ru.keywords, func(kw string) bool { return len(kw) < 2 }) || len(ru.keywords) == 0 {
			continue // runs on every text
		}
		want := keywordOffsets(text, ru.keywords)
		h, ok := got[i]
		at := slices.Sorted(slices.Values(append(slices.Clone(h.at), h.anchors...)))
		switch {
		case !ok && len(want) > 0, ok && len(want) == 0:
			t.Fatalf("%s in %q: the prefilter wakes it: %v; its keywords are at %v", ru.id, text, ok, want)
		case h.whole && !ru.matchesStartAtKeyword():
		case !slices.Equal(at, want):
			t.Fatalf("%s in %q: the prefilter finds its keywords at %v, they are at %v", ru.id, text, at, want)
		}
	}
}

// FuzzPrefilter checks the prefilter against keywordOffsets on any text.
func FuzzPrefilter(f *testing.F) {
	for _, s := range startsSeeds {
		f.Add(s)
	}
	f.Add("sK")
	f.Add("xx S.")
	f.Add("Ey\x00AKIA\xffhVs.")
	f.Fuzz(checkPrefilter)
}

// TestPrefilterKeywords checks the prefilter on texts of every rule's keywords, each in
// a random case, at the start or the end of a text, after and before random bytes.
func TestPrefilterKeywords(t *testing.T) {
	var kws []string
	for _, ru := range Default().rules {
		kws = append(kws, ru.keywords...)
	}
	rnd := rand.New(rand.NewSource(1))
	randomCase := func(s string) string {
		b := []byte(s)
		for i := range b {
			if rnd.Intn(2) == 0 {
				b[i] = byte(strings.ToUpper(string(b[i]))[0])
			}
		}
		return string(b)
	}
	for _, p := range testsource.Pieces(t, 64) {
		checkPrefilter(t, p.Text)
	}
	for _, kw := range kws {
		checkPrefilter(t, randomCase(kw))
		checkPrefilter(t, "x"+randomCase(kw))
		for c := 0; c < 256; c += 64 {
			var b strings.Builder
			for d := c; d < c+64; d++ {
				b.WriteString(randomCase(kw))
				b.WriteByte(byte(d))
				b.WriteString([]string{"", " ", "é"}[rnd.Intn(3)])
			}
			checkPrefilter(t, b.String())
		}
	}
	for range 2000 {
		var b strings.Builder
		for range rnd.Intn(8) {
			switch rnd.Intn(3) {
			case 0:
				b.WriteString(randomCase(kws[rnd.Intn(len(kws))]))
			case 1:
				b.WriteByte(byte(rnd.Intn(256)))
			case 2:
				b.WriteString(" x")
			}
		}
		checkPrefilter(t, b.String())
	}
}
