package fulltext

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// MaxTermBytes bounds a term: the rest of a longer run of letters and digits (a hash,
// base64) is not indexed, nor looked for.
const MaxTermBytes = 64

// Terms calls fn with each term of text, in order, and where it is in text
// (text[start:end] is the run it was made of: where a snippet marks a word as the index
// matched it), until fn returns false. Terms are runs of letters, digits and the marks
// that go with them, folded (fold): in lower case, without diacritics (é is e, as
// SQLite's unicode61 tokenizer has it, whether it was typed as one character or two),
// and in their compatibility forms (ｓｔａｔｅ is state). Anything else separates terms,
// so that a path (src/app.go) or an identifier (parse_config) is the phrase of its
// words. Chinese, Japanese and Korean, which a space does not part into words, are
// terms of two characters, one for each pair in a row (日本語 is 日本 本語; a character
// alone is its own term): a word of theirs is the phrase of its pairs.
func Terms(text string, fn func(term string, start, end int) bool) {
	var lower, folded []byte // a term not in its folded form already, made so (lower for ASCII)
	for i := 0; i < len(text); {
		// Past what separates terms.
		c := text[i]
		if c < utf8.RuneSelf {
			if !isWordByte(c) {
				i++
				continue
			}
		} else if r, size := utf8.DecodeRuneInString(text[i:]); !isWordRune(r) {
			i += size
			continue
		} else if isPaired(r) {
			var ok bool
			if i, folded, ok = pairs(text, i, folded, fn); !ok {
				return
			}
			continue
		}
		start, plain, ascii := i, true, true
		for i < len(text) {
			c := text[i]
			if c < utf8.RuneSelf {
				if !isWordByte(c) {
					break
				}
				if 'A' <= c && c <= 'Z' {
					plain = false
				}
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(text[i:])
			if !isWordRune(r) || isPaired(r) {
				break
			}
			plain, ascii = false, false
			i += size
		}
		term := text[start:i]
		switch {
		case !plain && ascii:
			// What fold gives an ASCII term, at a fraction of its cost: identifiers in
			// code are most of the terms not in lower case already (and lower, kept
			// here, is on the stack).
			lower = lower[:0]
			for j := 0; j < len(term); j++ {
				c := term[j]
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				lower = append(lower, c)
			}
			term = string(lower)
		case !plain:
			if term, folded = fold(term, folded); term == "" {
				continue // marks alone
			}
		}
		if !fn(cut(term), start, i) {
			return
		}
	}
}

// pairs calls fn with the terms of the run of paired characters at text[i:], each
// with the marks after it, and returns where the run ends, and false when fn did
// (folded is fold's buffer, given back).
func pairs(text string, i int, folded []byte, fn func(term string, start, end int) bool) (int, []byte, bool) {
	first, second, n := i, i, 0 // where the pair to give next starts, its second character, and how many were read
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isPaired(r) && !unicode.IsMark(r) {
			break
		}
		if isPaired(r) {
			if n >= 2 {
				var term string
				if term, folded = fold(text[first:i], folded); !fn(cut(term), first, i) {
					return i, folded, false
				}
				first = second
			}
			second, n = i, n+1
		}
		i += size
	}
	term, folded := fold(text[first:i], folded)
	return i, folded, fn(cut(term), first, i) // a pair with marks after it is long: a segment keeps a term's length in a byte
}

// fold is term in lower case, without its diacritics and in its compatibility form
// (NFKD, as ﬁ is fi), its letters folded as cases fold (ς is σ, ß is ss, the Kelvin
// sign k), composed again. It writes into buf, and gives it back for the next term.
func fold(term string, buf []byte) (string, []byte) {
	b := buf[:0]
	for _, r := range norm.NFKD.String(term) {
		switch {
		case unicode.Is(unicode.Mn, r):
		case r == 'ß' || r == 'ẞ':
			b = append(b, "ss"...)
		default:
			b = utf8.AppendRune(b, unicode.ToLower(unicode.ToUpper(r)))
		}
	}
	return norm.NFC.String(string(b)), b
}

// isPaired says whether r is of a script written without spaces between words, whose
// terms are pairs: Han, Hiragana, Katakana (and its mark of a long vowel), Hangul.
func isPaired(r rune) bool {
	return r >= 0x1100 && (unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) || r == 'ー' || r == 'ｰ')
}

// alone says whether term is one character of those whose terms are pairs.
func alone(term string) bool {
	r, size := utf8.DecodeRuneInString(term)
	return size == len(term) && isPaired(r)
}

// TermsOf is the terms of text, in order.
func TermsOf(text string) []string {
	var out []string
	Terms(text, func(t string, _, _ int) bool {
		out = append(out, t)
		return true
	})
	return out
}

// cut bounds a term to MaxTermBytes, on a rune's start.
func cut(term string) string {
	if len(term) <= MaxTermBytes {
		return term
	}
	n := MaxTermBytes
	for n > 0 && !utf8.RuneStart(term[n]) {
		n--
	}
	return strings.Clone(term[:n])
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) }

// InTerm says whether r is part of a term: a letter, a digit or a mark.
func InTerm(r rune) bool { return isWordRune(r) }
