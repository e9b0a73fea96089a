package redact

import (
	"flag"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/lucasjones/reggen"

	"github.com/agmem/agmem/internal/testsource"
)

var samples = flag.Int("samples", 5, "texts TestStartsAtKeywordGenerated makes from each gitleaks rule")

// findByWindows is Find as it was before the rules whose matches start at a keyword ran
// only there. It is what Find must still find.
func (r *Redactor) findByWindows(text string) []Finding { return r.find(text, false) }

// keywordOffsets are the offsets of text where one of kws starts, ignoring ASCII case,
// found without the prefilter.
func keywordOffsets(text string, kws []string) []int {
	var at []int
	for i := range text {
		for _, kw := range kws {
			if hasPrefixFold(text[i:], kw) {
				at = append(at, i)
				break
			}
		}
	}
	return at
}

// checkStartsAtKeyword fails t unless Find finds in text what findByWindows does, and
// unless each rule whose matches start at a keyword, run at its keywords' offsets in
// the whole text, gives the matches of its regex there: nothing matches elsewhere.
func checkStartsAtKeyword(t *testing.T, text string) (findings, matches int) {
	t.Helper()
	r := Default()
	got, want := r.Find(text), r.findByWindows(text)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("in %q\nFind finds          %+v\nfindByWindows finds %+v", text, got, want)
	}
	findings = len(got)
	for _, ru := range r.rules {
		if !ru.matchesStartAtKeyword() {
			continue
		}
		got := ru.matchesFrom(text, 0, len(text), keywordOffsets(text, ru.keywords))
		if want := ru.re().FindAllStringSubmatchIndex(text, -1); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s in %q\nat its keywords: %v\nits regex:       %v", ru.id, text, got, want)
		}
		matches += len(got)
	}
	return findings, matches
}

// unicodeFolds spells "s" and "k" as the characters outside ASCII that (?i) also
// matches them with, which the prefilter does not take for "s" and "k".
var unicodeFolds = strings.NewReplacer("s", "\u017f", "S", "\u017f", "k", "\u212a", "K", "\u212a")

// startsSeeds are texts at the edges of what a match that starts at a keyword may be.
var startsSeeds = []string{
	"x := s.field + ops.n + args.s.x",
	"token: s.Zx81Qp0LmN3vB7cKa1b2c3d4 end",
	"token: S.Zx81Qp0LmN3vB7cKa1b2c3d4 end", // the keyword in upper case; the regex wants "s."
	"s.Zx81Qp0LmN3vB7cKa1b2c3d4",            // at the start of the text: \b holds
	"xs.Zx81Qp0LmN3vB7cKa1b2c3d4;",          // after a word character: \b does not
	"és.Zx81Qp0LmN3vB7cKa1b2c3d4;",          // after a character that is not ASCII
	"\xffs.Zx81Qp0LmN3vB7cKa1b2c3d4;",       // after a byte that is not UTF-8
	"s.abcdefghijklmnopqrstuvwx is allowed", // the rule's allowlist: letters only
	"hvs." + strings.Repeat("aZ09_-", 16) + "\n",
	"hvs.s." + strings.Repeat("Zx81Qp0LmN3vB7cK", 7) + " s.Zx81Qp0LmN3vB7cKa1b2c3d4",
	"s.Zx81Qp0LmN3vB7cKa1b2c3d4s.Zx81Qp0LmN3vB7cKa1b2c3d4",
	"AKIAZ5GMHYJK7Q2XWN4PAKIAZ5GMHYJK7Q2XWN4P ASIAZ5GMHYJK7Q2XWN4P",
	"eyJhbGciOiJIUzI1NiJ9x.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijkl",
	"curl -u admin:S3cr3tP4ssw0rd https://x.example.com",
	"SK0123456789abcdef0123456789ABCDEF sk0123456789abcdef0123456789abcdef",
	"ends with the keyword s.",
	"s.Zx81Qp0LmN3vB7cKa1b2c3d4 " + strings.Repeat("s.x ", maxHits) + "s.Zx81Qp0LmN3vB7cKa1b2c3d4",
	"pat.abcdefghij0123456789AB.abcdefghij0123456789ABCD.abcdefghij0123456789", // harness-api-key: "pat." is not in its regex
	"CLOJAR\u017f_" + strings.Repeat("a1b2c3d4e5", 6),                          // (?i)S matches "ſ": no keyword "clojars_"
	"x pscale_pw_" + strings.Repeat("Zx81", 9) + " p\u017fcale_pw_" + strings.Repeat("Zx81", 9),
}

// FuzzStartsAtKeyword checks, for any text, that running the rules whose matches start
// at a keyword only at their keywords finds what searching windows around them did.
func FuzzStartsAtKeyword(f *testing.F) {
	for _, s := range startsSeeds {
		f.Add(s)
	}
	for _, p := range testsource.Pieces(f, 64) {
		f.Add(p.Text)
	}
	f.Fuzz(func(t *testing.T, text string) { checkStartsAtKeyword(t, text) })
}

// TestStartsAtKeywordGenerated checks Find against findByWindows on texts that hold
// secrets generated from every gitleaks rule's regex, in a case changed or not, with
// a character before and after that \b and the rules' endings see differently: alone,
// twice, inside a piece of Go source, or after more of the rule's keywords than
// windows are kept for. Run it with -samples=2000 for a long check.
func TestStartsAtKeywordGenerated(t *testing.T) {
	for _, s := range startsSeeds {
		checkStartsAtKeyword(t, s)
	}
	pieces := testsource.Pieces(t, 256)
	for _, p := range pieces {
		checkStartsAtKeyword(t, p.Text)
	}
	rnd := rand.New(rand.NewSource(1))
	before := []string{"", "", "x", "_", "9", "é", "\xff", " ", "\n", "=", "'", "s", "hv", `\`, "."}
	after := []string{"", "", " ", "\n", "x", ";", `\n`, "é", "'", "$", ".", "-"}
	texts, findings, matches := 0, 0, 0
	for i := range gitleaksRules {
		ru := &gitleaksRules[i]
		generated, err := generatedTexts(ru.regex, int64(i), rnd)
		if err != nil {
			t.Fatalf("%s: %v", ru.id, err)
		}
		for _, s := range generated {
			s = before[rnd.Intn(len(before))] + s + after[rnd.Intn(len(after))]
			switch rnd.Intn(5) {
			case 1:
				s += s
			case 2:
				s = s[:rnd.Intn(len(s)+1)] + s
			case 3:
				p := pieces[rnd.Intn(len(pieces))].Text
				at := rnd.Intn(len(p) + 1)
				s = p[:at] + s + p[at:]
			case 4:
				if len(ru.keywords) > 0 {
					kw := ru.keywords[rnd.Intn(len(ru.keywords))]
					n := rnd.Intn(maxHits + 1)
					s = strings.Repeat(kw+" ", n) + s + strings.Repeat(" "+kw, maxHits-n)
				}
			}
			f, m := checkStartsAtKeyword(t, s)
			texts, findings, matches = texts+1, findings+f, matches+m
		}
	}
	t.Logf("%d generated texts: %d findings, %d matches of rules that start at a keyword", texts, findings, matches)
}

// generatedTexts returns *samples texts made by reggen from regex, seeded by seed, each
// as it is, in upper or lower case, or with letters swapped for the characters outside
// ASCII that fold to them, as rnd picks.
func generatedTexts(regex string, seed int64, rnd *rand.Rand) ([]string, error) {
	g, err := reggen.NewGenerator(regex)
	if err != nil {
		return nil, err
	}
	g.SetSeed(seed)
	texts := make([]string, *samples)
	for i := range texts {
		s := g.Generate(4 + rnd.Intn(8))
		switch rnd.Intn(5) {
		case 1:
			s = strings.ToUpper(s)
		case 2:
			s = strings.ToLower(s)
		case 3:
			s = unicodeFolds.Replace(s)
		}
		texts[i] = s
	}
	return texts, nil
}
