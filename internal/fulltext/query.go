package fulltext

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxQuery bounds a query's length, in bytes.
const MaxQuery = 1000

// ErrQuery is a query Parse cannot take; the error says why.
var ErrQuery = errors.New("bad query")

// A Query is what a search looks for: a tree of phrases joined by AND, OR and NOT.
type Query struct {
	root node
	// Words are the query's terms, in order, a prefix ending in *: what a snippet marks.
	Words []string
	said  bool // it says how its parts combine: an operator or a parenthesis
}

// AnyWord is the query that matches what holds any of q's words and phrases, when q is
// only words and phrases side by side, each of which must match: a question typed whole
// ("how do I unlock the terraform state") has words no entry holds all of. It is false
// for a query of one word, or one that says how its parts combine (AND, OR, NOT,
// parentheses).
func (q *Query) AnyWord() (*Query, bool) {
	var parts []node
	var side func(n node) bool
	side = func(n node) bool {
		switch n := n.(type) {
		case *phrase:
			parts = append(parts, n)
			return true
		case *operator:
			return n.op == "AND" && side(n.left) && side(n.right)
		}
		return false
	}
	if q.said || !side(q.root) || len(parts) < 2 {
		return nil, false
	}
	root := parts[0]
	for _, p := range parts[1:] {
		root = &operator{"OR", root, p}
	}
	return &Query{root: root, Words: q.Words, said: true}, true
}

// node is a phrase, or an operator and its two sides.
type node interface{ isNode() }

// phrase matches its terms in a row, in one field; a single term is a phrase of one. With
// prefix set, the last term matches every term it starts.
type phrase struct {
	terms  []string
	prefix bool
}

type operator struct {
	op          string // AND, OR, NOT
	left, right node
}

func (*phrase) isNode()   {}
func (*operator) isNode() {}

// Parse reads what a person or an agent typed:
//
//   - words match words, whatever their case; every word must match (AND) unless OR
//     stands between two;
//   - "a phrase" matches its words in a row;
//   - a word ending in * matches every word it starts (serv* matches server), the last
//     word of a phrase too ("state lo*", or "state lo"*, matches state lock);
//   - AND, OR and NOT (in capitals) combine what stands around them, NOT binding
//     closest, then AND, then OR, and parentheses group; NOT needs something before it,
//     and AND NOT is NOT;
//   - anything else that is not a letter, a digit or a mark separates words, so that a
//     path (src/app.go) or an identifier (parse_config) matches as the phrase of its
//     words, and a word of Chinese or Japanese as the phrase of its pairs of
//     characters (Terms); one such character alone matches the pairs it starts.
//
// No input is an error other than ErrQuery.
func Parse(q string) (*Query, error) {
	q = strings.TrimSpace(q)
	switch {
	case q == "":
		return nil, fmt.Errorf("%w: the query is empty", ErrQuery)
	case len(q) > MaxQuery:
		return nil, fmt.Errorf("%w: the query is longer than %d bytes", ErrQuery, MaxQuery)
	case !utf8.ValidString(q):
		return nil, fmt.Errorf("%w: the query is not UTF-8", ErrQuery)
	}
	toks, words, err := lex(q)
	noWord := fmt.Errorf("%w: the query holds no word to look for", ErrQuery)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: %v", ErrQuery, err)
	case len(toks) == 0:
		return nil, noWord
	}
	p := parser{toks: toks}
	root, err := p.or()
	if err == nil && p.at < len(p.toks) {
		err = p.unexpected() // a ) with nothing open
	}
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: %v", ErrQuery, err)
	case len(words) == 0:
		return nil, noWord
	}
	said := slices.ContainsFunc(toks, func(t token) bool { return t.kind != "phrase" })
	return &Query{root: root, Words: words, said: said}, nil
}

// token is a phrase, a parenthesis, or an operator.
type token struct {
	kind   string // "phrase", "(", ")", "AND", "OR", "NOT"
	phrase *phrase
}

// lex splits a query into tokens, and returns its words.
func lex(q string) ([]token, []string, error) {
	var toks []token
	var words []string
	add := func(terms []string, prefix bool) {
		if len(terms) == 0 {
			return // punctuation alone: nothing to look for
		}
		// A character of Chinese or Japanese alone looks for the pairs it starts (the
		// terms of 日本語 are 日本 and 本語: 日 finds it, 語 does not).
		prefix = prefix || alone(terms[len(terms)-1])
		for i, t := range terms {
			if prefix && i == len(terms)-1 {
				t += "*"
			}
			words = append(words, t)
		}
		toks = append(toks, token{kind: "phrase", phrase: &phrase{terms: terms, prefix: prefix}})
	}
	for pos := 0; pos < len(q); {
		r, size := utf8.DecodeRuneInString(q[pos:])
		switch {
		case unicode.IsSpace(r):
			pos += size
		case r == '"':
			end := strings.IndexByte(q[pos+1:], '"')
			if end < 0 {
				return nil, nil, errors.New(`a " is not closed`)
			}
			phrase := strings.TrimRightFunc(q[pos+1:pos+1+end], unicode.IsSpace)
			words := strings.TrimRight(phrase, "*")
			last, _ := utf8.DecodeLastRuneInString(words)
			prefix := len(words) < len(phrase) && InTerm(last) // "state lo*", not "state *"
			pos += end + 2
			if pos < len(q) && q[pos] == '*' { // "state lo"*, as SQLite's FTS5 writes it
				prefix = true
				pos++
			}
			add(TermsOf(words), prefix)
		case r == '(' || r == ')':
			toks = append(toks, token{kind: string(r)})
			pos++
		default:
			start := pos
			for pos < len(q) {
				r, size := utf8.DecodeRuneInString(q[pos:])
				if unicode.IsSpace(r) || r == '"' || r == '(' || r == ')' {
					break
				}
				pos += size
			}
			switch w := q[start:pos]; w {
			case "AND", "OR", "NOT":
				toks = append(toks, token{kind: w})
			default:
				add(TermsOf(strings.TrimRight(w, "*")), strings.HasSuffix(w, "*"))
			}
		}
	}
	return toks, words, nil
}

// parser reads tokens by precedence: OR of ANDs of NOTs of phrases or groups.
type parser struct {
	toks []token
	at   int
}

func (p *parser) peek() string {
	if p.at < len(p.toks) {
		return p.toks[p.at].kind
	}
	return ""
}

func (p *parser) or() (node, error) {
	left, err := p.and()
	for err == nil && p.peek() == "OR" {
		p.at++
		var right node
		if right, err = p.and(); err == nil {
			left = &operator{"OR", left, right}
		}
	}
	return left, err
}

// and reads NOTs joined by AND, or side by side. AND NOT is NOT, as people write it:
// what stands before it, less what follows.
func (p *parser) and() (node, error) {
	left, err := p.not()
	for err == nil {
		switch p.peek() {
		case "AND":
			p.at++
			if p.peek() == "NOT" {
				left, err = p.nots(left)
				continue
			}
		case "phrase", "(":
		default:
			return left, nil
		}
		var right node
		if right, err = p.not(); err == nil {
			left = &operator{"AND", left, right}
		}
	}
	return left, err
}

func (p *parser) not() (node, error) {
	left, err := p.primary()
	if err != nil {
		return nil, err
	}
	return p.nots(left)
}

// nots reads the NOTs that follow left.
func (p *parser) nots(left node) (node, error) {
	for p.peek() == "NOT" {
		p.at++
		right, err := p.primary()
		if err != nil {
			return nil, err
		}
		left = &operator{"NOT", left, right}
	}
	return left, nil
}

func (p *parser) primary() (node, error) {
	switch p.peek() {
	case "phrase":
		p.at++
		return p.toks[p.at-1].phrase, nil
	case "(":
		p.at++
		n, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.peek() != ")" {
			return nil, errors.New("a ( is not closed")
		}
		p.at++
		return n, nil
	}
	return nil, p.unexpected()
}

// unexpected is the error of a token where an operand should be.
func (p *parser) unexpected() error {
	switch k := p.peek(); k {
	case "":
		return errors.New("the query ends in an operator")
	case ")":
		return errors.New("a ) closes nothing, or an empty group")
	default:
		return fmt.Errorf("%s needs something to its left", k)
	}
}
