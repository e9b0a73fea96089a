// Package tokens owns how many tokens agmem counts a text as, for a bound on what it
// gives an agent (Claude Code refuses a tool's answer past 25,000 tokens) and for what
// it says a read costs. No tokenizer of a model is at hand, and theirs differ: the count
// is from above for what agmem recorded (logs, JSON, escapes, any script), and somewhat
// above for prose.
package tokens

import "unicode/utf8"

// Count is how many tokens text is counted as. A tokenizer on bytes (byte-level BPE, as
// GPT's and Claude's are) makes at most one token of a byte, and each byte outside
// ASCII is counted so: a character of Chinese or an emoji is three or four. In ASCII, a
// run of letters is a token for every four (a capital after a small letter starts
// another run: cartTotal is cart and Total), a run of digits one for every three, a run
// of white space one (a single space none: it goes with the word after it), and any
// other character one.
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
		if c == ' ' && i+1 < len(text) && class[text[i+1]] != space {
			i++ // a single space goes with what follows it
			c = text[i]
		}
		switch j := i + 1; class[c] {
		case space:
			for j < len(text) && class[text[j]] == space {
				j++
			}
			i = j
		case lower, upper:
			for ; j < len(text) && j-i < 4; j++ {
				if k := class[text[j]]; k == upper && class[text[j-1]] == lower || k != lower && k != upper {
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

const (
	other = iota
	space
	lower
	upper
	digit
)
