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
// matched it), until fn returns false. Terms are runs of letters and digits, in lower
// case and without diacritics (é is e, as SQLite's unicode61 tokenizer has it).
// Anything else separates terms, so that a path (src/app.go) or an identifier
// (parse_config) is the phrase of its words.
func Terms(text string, fn func(term string, start, end int) bool) {
	var lower []byte // a term not in lower case already, made so
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
			if !isWordRune(r) {
				break
			}
			plain, ascii = false, false
			i += size
		}
		term := text[start:i]
		switch {
		case !plain && ascii:
			// What the general case gives an ASCII term, at a fraction of its cost:
			// identifiers in code are most of the terms not in lower case already.
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
			lower = lower[:0]
			for _, r := range norm.NFD.String(term) {
				if !unicode.Is(unicode.Mn, r) {
					lower = utf8.AppendRune(lower, unicode.ToLower(r))
				}
			}
			term = norm.NFC.String(string(lower))
		}
		if !fn(cut(term), start, i) {
			return
		}
	}
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

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// InTerm says whether r is part of a term: a letter or a digit.
func InTerm(r rune) bool { return isWordRune(r) }
