// Package tokens owns how many tokens agmem counts a text as, for a bound on what it
// gives an agent (Claude Code refuses a tool's answer past 25,000 tokens) and for what
// it says a read costs. No tokenizer of a model is at hand, and theirs differ: the count
// is from above for what agmem recorded (logs, JSON, escapes, any script), and somewhat
// above for prose.
package tokens

import (
	"strings"
	"unicode/utf8"
)

// Count is how many tokens text is counted as. A tokenizer on bytes (byte-level BPE, as
// GPT's and Claude's are) makes at most one token of a byte, and each byte outside
// ASCII is counted so: a character of Chinese or an emoji is three or four. In ASCII, a
// run of letters is a token for every four, but a pair of letters rare in words and code
// (common) starts another, as a capital after a small letter does: random letters, base64
// and hex are a token for every one or two characters to a tokenizer, words for every
// four or more. A run of digits is one for every three, a run of one white space
// character one for every sixteen (a single space before a letter or a sign none: it goes
// with what follows it), and any other character one.
func Count[T ~string | ~[]byte](text T) int {
	n, _ := scan(text, -1)
	return n
}

// End is where the first n tokens of text end: text[:End(text, n)] is counted as at
// most n, and ends where a character does.
func End(text string, n int) int {
	_, end := scan(text, n)
	for end > 0 && end < len(text) && !utf8.RuneStart(text[end]) {
		end--
	}
	return end
}

// scan counts the tokens of text up to max of them (all of them when max < 0), and
// says where the last it counted ends.
func scan[T ~string | ~[]byte](text T, max int) (n, end int) {
	for i := 0; i < len(text); n++ {
		if n == max {
			return n, i
		}
		c := text[i]
		if c == ' ' && i+1 < len(text) && class[text[i+1]] != space && class[text[i+1]] != digit {
			i++ // a single space goes with what follows it, but for a digit
			c = text[i]
		}
		switch j := i + 1; class[c] {
		case space:
			for j < len(text) && text[j] == c && j-i < 16 {
				j++
			}
			i = j
		case lower, upper:
			for ; j < len(text) && j-i < 4; j++ {
				if k := class[text[j]]; k == upper && class[text[j-1]] == lower || k != lower && k != upper ||
					common[text[j-1]|0x20-'a']&(1<<(text[j]|0x20-'a')) == 0 {
					break
				}
			}
			i = j
		case digit:
			for j < len(text) && j-i < 3 && class[text[j]] == digit {
				j++
			}
			i = j
		default:
			i = j
		}
	}
	return n, len(text)
}

// class is what each byte is to scan.
var class = func() (t [256]byte) {
	for c := range t {
		switch {
		case c == ' ' || c == '\n' || c == '\t' || c == '\r':
			t[c] = space
		case 'a' <= c && c <= 'z':
			t[c] = lower
		case 'A' <= c && c <= 'Z':
			t[c] = upper
		case '0' <= c && c <= '9':
			t[c] = digit
		}
	}
	return t
}()

// common are the pairs of letters, either case, that do not start another token
// within a run of letters: common[a] has bit b when the pair a, b is one. They are the
// pairs that made 95% of the pairs of letters in words and identifiers of Go's source
// tree (Go 1.26), but those of hex literals (xa to xf).
var common = func() (t [26]uint32) {
	for pair := range strings.FieldsSeq(commonPairs) {
		t[pair[0]-'a'] |= 1 << (pair[1] - 'a')
	}
	return t
}()

const commonPairs = `
ab ac ad af ag ai ak al am an ap ar as at au av ax ay ba bc be bi bj bl bo br bs bu
by ca cc ce ch ci ck cl cm co cr cs ct cu da dd de di dl do dr ds du ea ec ed ee ef
eg el em en ep eq er es et ev ew ex ey fa fd fe ff fi fl fm fn fo fr fs ft fu ge gh
gi gn go gr gs gt ha he hi ho ht ia ib ic id ie if ig il im in io ip ir is it iv ix
iz ka ke la ld le li ll lo ls lt lu ly ma mb md me mi mm mo mp ms mt mu na nc nd ne
nf ng ni nk nl nn no ns nt nu nv oa ob oc od of og oi ok ol om on oo op or os ot ou
ov ow pa pc pe pi pl po pp pr ps pt pu qu ra rc rd re rf rg ri rl rm rn ro rr rs rt
ru rv ry sa sc se sh si sk sl sm so sp sr ss st su sy ta tc te tf th ti tl to tp tr
ts tt tu ty ub uc ue uf ui ul um un up ur us ut ux va ve vi vp wa we wh wi wo wr xp
xt ym yp ys yt ze`

const (
	other = iota
	space
	lower
	upper
	digit
)
