package redact

import (
	"iter"
	"math/bits"
	"slices"
	"sync/atomic"
)

// prefilter finds, in one pass over a text, which rules' keywords it holds, ignoring
// ASCII case: most positions of the text cost one bit of a table of keywords' first
// three bytes, and the rest a short list of the keywords that start with those three.
// It is a few KiB: agmem record builds it in every process, where each fresh page
// costs a fault.
type prefilter struct {
	// tri has a bit for the first three bytes of every keyword, as trigram folds them:
	// a fifth of the positions of Go source start with a keyword's first two bytes, a
	// few hundredths with its first three, and tri's 4 KiB stay in the L1 cache.
	tri [triWords]uint64
	// before is, for each word of tri, how many bits the words before it have: with
	// the bits below a bit in its word, the bit's rank, which numbers its keywords.
	before [triWords]uint16
	// cands[lists[n]:lists[n+1]] are the keywords of the bit of rank n, in the order
	// of the rules; a two-byte keyword is in the lists of all its 32 bits.
	lists []int32
	cands []*candidate
	// always are the rules without keywords: they run on every text.
	always []int
}

type candidate struct {
	keyword string // lower case, at least two bytes
	// head is the keyword's first four bytes (fewer, for a shorter one) in a word, as
	// head4 reads a text, and mask covers them: one comparison rejects most texts.
	head, mask uint32
	rule       int
	// kind is how a hit of this keyword is scanned (a hitKind), found on the first hit;
	// atomic, as a Redactor is shared.
	kind atomic.Uint32
}

const triWords = 1 << 15 / 64

func newPrefilter(rules []*rule) *prefilter {
	p := &prefilter{}
	n := 0
	for _, r := range rules {
		n += len(r.keywords)
	}
	all := make([]candidate, 0, n) // one allocation, not one per keyword
	for i, r := range rules {
		if len(r.keywords) == 0 {
			p.always = append(p.always, i)
		}
		for _, kw := range r.keywords {
			if len(kw) < 2 {
				p.always = append(p.always, i)
				break
			}
			all = append(all, candidate{keyword: kw, rule: i, head: head4(kw), mask: ^uint32(0) >> (8 * (4 - min(4, len(kw))))})
			for t := range trigrams(kw) {
				p.tri[t/64] |= 1 << (t % 64)
			}
		}
	}
	var bitCount uint16
	for w, word := range p.tri {
		p.before[w] = bitCount
		bitCount += uint16(bits.OnesCount64(word))
	}
	// A counting sort of the keywords by rank, stable: the lists keep the rules' order.
	p.lists = make([]int32, bitCount+1)
	for i := range all {
		for t := range trigrams(all[i].keyword) {
			p.lists[p.rank(t)+1]++
		}
	}
	for rank := range bitCount {
		p.lists[rank+1] += p.lists[rank]
	}
	p.cands = make([]*candidate, p.lists[bitCount])
	next := slices.Clone(p.lists[:bitCount])
	for i := range all {
		for t := range trigrams(all[i].keyword) {
			rank := p.rank(t)
			p.cands[next[rank]] = &all[i]
			next[rank]++
		}
	}
	return p
}

// trigrams are the bits of tri for the first three bytes of keyword kw, or for its
// first two and any third byte if kw has two.
func trigrams(kw string) iter.Seq[uint32] {
	return func(yield func(uint32) bool) {
		if len(kw) > 2 {
			yield(trigram(kw[0], kw[1], kw[2]))
			return
		}
		for c := range byte(32) {
			if !yield(trigram(kw[0], kw[1], c)) {
				return
			}
		}
	}
}

// rank is how many bits of tri come before bit t.
func (p *prefilter) rank(t uint32) int {
	return int(p.before[t/64]) + bits.OnesCount64(p.tri[t/64]&(1<<(t%64)-1))
}

// keywords are the keywords whose first three bytes, or two, set bit t of tri.
func (p *prefilter) keywords(t uint32) []*candidate {
	rank := p.rank(t)
	return p.cands[p.lists[rank]:p.lists[rank+1]]
}

// skip returns the first offset of text from i where a keyword may start, as tri
// tells, and the trigram there; len(text) if none. At the last two bytes only a
// two-byte keyword can start, whose bits cover any third byte. It is a function of its
// own, not inlined: in the loop of rules, which holds more, the registers it needs
// were spilled at every byte, and the prefilter ran a quarter slower.
func (p *prefilter) skip(text string, i int) (int, uint32) {
	if i+2 < len(text) {
		// t rolls along the text: each position adds a byte and drops one.
		t := trigram(0, text[i], text[i+1])
		for ; i+2 < len(text); i++ {
			t = t<<5&(1<<15-1) | uint32(text[i+2]&0x1f)
			if p.tri[t/64]&(1<<(t%64)) != 0 {
				return i, t
			}
		}
	}
	if i+2 == len(text) {
		if t := trigram(text[i], text[i+1], 0); p.tri[t/64]&(1<<(t%64)) != 0 {
			return i, t
		}
	}
	return len(text), 0
}

// trigram is where three bytes of a text are in prefilter.tri: the low five bits of
// each, the same for a letter in either case. Bytes that share them only cost a look
// at the keywords of the bit.
func trigram(a, b, c byte) uint32 { return uint32(a&0x1f)<<10 | uint32(b&0x1f)<<5 | uint32(c&0x1f) }

// maxHits is how many keyword positions are kept per rule; past it the rule scans the
// whole text, which is then no slower than the windows would be. A rule whose matches
// start at its keywords keeps them all: it scans the whole text only at them.
const maxHits = 256

// hits are where a rule's keywords occur in a text.
type hits struct {
	rule int
	// whole says the whole text is to be scanned: the rule has no keywords, too many
	// hits, or a keyword its match may not contain.
	whole bool
	// at are the offsets of keywords to scan a window around, none if whole, unless
	// the rule's matches start at its keywords.
	at []int
	// anchors are offsets of keywords that name the secret's key in a rule of
	// gitleaks' key = value template: the match starts at the identifier holding it.
	anchors []int
}

// rules returns the rules that may match text, and where, in the order of the rules.
// Most texts wake few rules, so the result is a short list rather than a set.
func (p *prefilter) rules(text string, rules []*rule) []hits {
	var out []hits
	for _, i := range p.always {
		out = append(out, hits{rule: i, whole: true})
	}
	find := func(rule int) *hits {
		for k := range out {
			if out[k].rule == rule {
				return &out[k]
			}
		}
		out = append(out, hits{rule: rule})
		return &out[len(out)-1]
	}
	for i, t := p.skip(text, 0); i < len(text); i, t = p.skip(text, i+1) {
		head := head4(text[i:])
		for _, c := range p.keywords(t) {
			if head&c.mask != c.head || !hasPrefixFold(text[i:], c.keyword) {
				continue
			}
			h := find(c.rule)
			if h.whole {
				if rules[c.rule].matchesStartAtKeyword() {
					h.at = appendOnce(h.at, i)
				}
				continue
			}
			kind := hitKind(c.kind.Load())
			if kind == unknownHit {
				kind = rules[c.rule].hitKind(c.keyword)
				c.kind.Store(uint32(kind))
			}
			switch {
			case kind == wholeHit || len(h.at)+len(h.anchors) == maxHits:
				h.whole = true
				if rules[c.rule].matchesStartAtKeyword() {
					h.at = appendOnce(h.at, i)
				} else {
					h.at, h.anchors = nil, nil
				}
			case kind == anchorHit:
				h.anchors = appendOnce(h.anchors, i)
			default:
				h.at = appendOnce(h.at, i)
			}
		}
	}
	slices.SortFunc(out, func(a, b hits) int { return a.rule - b.rule })
	return out
}

func appendOnce(offsets []int, i int) []int {
	if n := len(offsets); n > 0 && offsets[n-1] == i {
		return offsets
	}
	return append(offsets, i)
}

// head4 is the first four bytes of s, fewer at its end, in lower case, the first in the
// lowest byte of the word.
func head4(s string) uint32 {
	var h uint32
	for j := 0; j < min(4, len(s)); j++ {
		h |= uint32(lower(s[j])) << (8 * j)
	}
	return h
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// hasPrefixFold says whether s starts with the lower-case keyword kw, ignoring ASCII case.
func hasPrefixFold(s, kw string) bool {
	if len(s) < len(kw) {
		return false
	}
	for i := 0; i < len(kw); i++ {
		if lower(s[i]) != kw[i] {
			return false
		}
	}
	return true
}
