package recall

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxQuery bounds a query's length, in bytes.
const MaxQuery = 1000

// ErrQuery is a query the index cannot take; the error says why.
var ErrQuery = errors.New("bad query")

// matchQuery turns what a person or an agent typed into the index's query language
// (SQLite FTS5's), so that no input can be a syntax error the engine reports in its own
// terms, and none reaches a column or an operator it was not meant for:
//
//   - words match words, whatever their case; every word must match (AND) unless OR
//     stands between two;
//   - "a phrase" matches its words in a row;
//   - a word ending in * matches every word it starts (serv* matches server);
//   - AND, OR and NOT (in capitals) combine what stands around them, and parentheses
//     group; NOT needs something before it;
//   - anything else that is not a letter or a digit separates words, so that a path
//     (src/app.go) or an identifier (parse_config) matches as the phrase of its words.
//
// It also returns the words, for marking matches in snippets; a word that is a prefix
// ends in *.
func matchQuery(q string) (string, []string, error) {
	q = strings.TrimSpace(q)
	switch {
	case q == "":
		return "", nil, fmt.Errorf("%w: the query is empty", ErrQuery)
	case len(q) > MaxQuery:
		return "", nil, fmt.Errorf("%w: the query is longer than %d bytes", ErrQuery, MaxQuery)
	case !utf8.ValidString(q):
		return "", nil, fmt.Errorf("%w: the query is not UTF-8", ErrQuery)
	}
	p := parser{in: q}
	if err := p.parse(); err != nil {
		return "", nil, fmt.Errorf("%w: %v", ErrQuery, err)
	}
	if len(p.words) == 0 {
		return "", nil, fmt.Errorf("%w: the query holds no word to look for", ErrQuery)
	}
	return strings.Join(p.out, " "), p.words, nil
}

// parser reads a query a token at a time, writing FTS5's syntax as it goes.
type parser struct {
	in    string
	pos   int
	out   []string
	words []string
	depth int
	// operand says whether what was written last can be followed by an operator.
	operand bool
}

func (p *parser) parse() error {
	for p.pos < len(p.in) {
		r, size := utf8.DecodeRuneInString(p.in[p.pos:])
		switch {
		case unicode.IsSpace(r):
			p.pos += size
		case r == '"':
			if err := p.phrase(); err != nil {
				return err
			}
		case r == '(':
			p.pos++
			p.depth++
			p.out = append(p.out, "(")
			p.operand = false
		case r == ')':
			p.pos++
			if p.depth == 0 || !p.operand {
				return errors.New("a ) closes nothing, or an empty group")
			}
			p.depth--
			p.out = append(p.out, ")")
		default:
			if err := p.word(); err != nil {
				return err
			}
		}
	}
	if p.depth > 0 {
		return errors.New("a ( is not closed")
	}
	if !p.operand {
		return errors.New("the query ends in an operator")
	}
	return nil
}

// word reads a bare word: an operator, or terms.
func (p *parser) word() error {
	start := p.pos
	for p.pos < len(p.in) {
		r, size := utf8.DecodeRuneInString(p.in[p.pos:])
		if unicode.IsSpace(r) || r == '"' || r == '(' || r == ')' {
			break
		}
		p.pos += size
	}
	w := p.in[start:p.pos]
	switch w {
	case "AND", "OR", "NOT":
		if !p.operand {
			return fmt.Errorf("%s needs something to its left", w)
		}
		p.out = append(p.out, w)
		p.operand = false
		return nil
	}
	prefix := strings.HasSuffix(w, "*")
	terms := termsOf(strings.TrimRight(w, "*"))
	if len(terms) == 0 {
		return nil // punctuation alone: nothing to look for
	}
	text := quote(strings.Join(terms, " "))
	if prefix {
		text += "*"
		terms[len(terms)-1] += "*"
	}
	p.words = append(p.words, terms...)
	p.term(text)
	return nil
}

// phrase reads a quoted phrase.
func (p *parser) phrase() error {
	end := strings.IndexByte(p.in[p.pos+1:], '"')
	if end < 0 {
		return errors.New(`a " is not closed`)
	}
	terms := termsOf(p.in[p.pos+1 : p.pos+1+end])
	p.pos += end + 2
	if len(terms) == 0 {
		return nil
	}
	p.words = append(p.words, terms...)
	p.term(quote(strings.Join(terms, " ")))
	return nil
}

// term writes a term, after an implicit AND if need be (FTS5 takes two terms side by
// side as AND, but not a term after a group's end).
func (p *parser) term(t string) {
	if p.operand {
		p.out = append(p.out, "AND")
	}
	p.out = append(p.out, t)
	p.operand = true
}

// termsOf splits text into the words the index holds: runs of letters and digits, in
// lower case.
func termsOf(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// quote writes words as an FTS5 string: in double quotes, which no word holds.
func quote(words string) string { return `"` + words + `"` }
