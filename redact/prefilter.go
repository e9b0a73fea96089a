package redact

import (
	"slices"
	"sync/atomic"
)

// prefilter finds, in one pass over a text, which rules' keywords it holds, ignoring
// ASCII case: it indexes every keyword by its first two bytes, and most positions of
// the text cost one bit of a table of keywords' first three.
type prefilter struct {
	// tri has a bit for the first three bytes of every keyword, as trigram folds them:
	// a fifth of the positions of Go source start with a keyword's first two bytes, a
	// few hundredths with its first three, and tri's 4 KiB stay in the L1 cache, where
	// slot's 128 KiB do not.
	tri [1 << 15 / 64]uint64
	// slot is, for two bytes, 1 + the index in cands of the keywords that start with
	// them, or 0: an array, as a map lookup at every other position of a text cost more
	// than all the rest of the prefilter.
	slot  [1 << 16]uint16
	cands [][]*candidate
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

func newPrefilter(rules []*rule) *prefilter {
	p := &prefilter{}
	for i, r := range rules {
		if len(r.keywords) == 0 {
			p.always = append(p.always, i)
		}
		for _, kw := range r.keywords {
			if len(kw) < 2 {
				p.always = append(p.always, i)
				break
			}
			k := bigram(kw[0], kw[1])
			if p.slot[k] == 0 {
				p.cands = append(p.cands, nil)
				p.slot[k] = uint16(len(p.cands))
			}
			c := &candidate{keyword: kw, rule: i, head: head4(kw), mask: ^uint32(0) >> (8 * (4 - min(4, len(kw))))}
			p.cands[p.slot[k]-1] = append(p.cands[p.slot[k]-1], c)
			p.addTrigrams(kw)
		}
	}
	return p
}

// addTrigrams sets the bits of tri for the first three bytes of keyword kw, or for its
// first two and any third byte if kw has two.
func (p *prefilter) addTrigrams(kw string) {
	if len(kw) > 2 {
		t := trigram(kw[0], kw[1], kw[2])
		p.tri[t/64] |= 1 << (t % 64)
		return
	}
	for c := range byte(32) {
		t := trigram(kw[0], kw[1], c)
		p.tri[t/64] |= 1 << (t % 64)
	}
}

// trigram is where three bytes of a text are in prefilter.tri: the low five bits of
// each, the same for a letter in either case. Bytes that share them only cost a look
// at slot.
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
	for i := 0; i+1 < len(text); i++ {
		if i+2 < len(text) {
			if t := trigram(text[i], text[i+1], text[i+2]); p.tri[t/64]&(1<<(t%64)) == 0 {
				continue
			}
		}
		slot := p.slot[bigram(lower(text[i]), lower(text[i+1]))]
		if slot == 0 {
			continue
		}
		head := head4(text[i:])
		for _, c := range p.cands[slot-1] {
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

func bigram(a, b byte) uint16 { return uint16(a)<<8 | uint16(b) }

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
