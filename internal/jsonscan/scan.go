// Package jsonscan reads JSON text in one pass, a token at a time, for the hot paths
// that encoding/json made slow by checking their input whole and then decoding it
// again: white space, strings (checked, or unquoted as encoding/json unquotes them),
// numbers, true, false and null, and whole values skipped without recursion.
//
// It accepts exactly what encoding/json accepts, its bound on nesting included: a
// caller that reads with it in place of encoding/json refuses nothing that
// encoding/json reads, and reads nothing that it refuses. It also writes what its
// callers write most, strings, and escapes text for HTML, byte for byte as
// encoding/json does, with the same eight-bytes-at-a-time scans.
package jsonscan

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrSyntax is the one error a Scanner gives: the text is not JSON (or, ErrTooDeep,
// not JSON this reader takes).
var ErrSyntax = errors.New("invalid JSON")

// ErrTooDeep is ErrSyntax for containers nested deeper than MaxDepth.
var ErrTooDeep = fmt.Errorf("%w: nested deeper than %d containers", ErrSyntax, MaxDepth)

// MaxDepth is encoding/json's bound on nesting: the containers a value may be in,
// itself included.
const MaxDepth = 10000

// Scanner reads JSON text a token at a time.
type Scanner struct {
	data   []byte
	pos    int
	spaced bool // white space was read past
}

// New returns a Scanner that reads data from its start.
func New(data []byte) Scanner { return Scanner{data: data} }

// Peek skips white space and returns the byte after it, or 0 at the end.
func (s *Scanner) Peek() byte {
	for s.pos < len(s.data) {
		switch c := s.data[s.pos]; c {
		case ' ', '\t', '\n', '\r':
			s.pos++
			s.spaced = true
		default:
			return c
		}
	}
	return 0
}

// Next skips white space and reads the byte c, or fails.
func (s *Scanner) Next(c byte) error {
	if s.Peek() != c {
		return ErrSyntax
	}
	s.pos++
	return nil
}

// End says whether only white space is left.
func (s *Scanner) End() bool { return s.Peek() == 0 && s.pos == len(s.data) }

// Open reads the opening delimiter of a container that closes with end, which must be
// next, and says whether a first member or element follows. Callers bound how deep
// they open containers themselves; Skip bounds the rest.
func (s *Scanner) Open(end byte) bool {
	s.pos++
	if s.Peek() == end {
		s.pos++
		return false
	}
	return true
}

// More reads, after a member or an element of a container that closes with end, the
// comma before the next one (true) or the closing delimiter (false).
func (s *Scanner) More(end byte) (bool, error) {
	switch s.Peek() {
	case ',':
		s.pos++
		return true, nil
	case end:
		s.pos++
		return false, nil
	}
	return false, ErrSyntax
}

// Members reads data, one JSON object, a member at a time, as Object does, and says
// whether data was one object, read whole, and member took every member.
func Members(data []byte, member func(s *Scanner, name string) bool) bool {
	s := New(data)
	return s.Object(member) && s.End()
}

// Object reads an object, which must be next, a member at a time: member gets each
// name, unquoted as encoding/json unquotes it, with s at the member's value, which
// member must read, and says whether to go on. Object says whether it read an object
// and member took every member.
func (s *Scanner) Object(member func(s *Scanner, name string) bool) bool {
	if s.Peek() != '{' {
		return false
	}
	for more := s.Open('}'); more; {
		name, err := s.Unquote()
		if err != nil || s.Next(':') != nil || !member(s, name) {
			return false
		}
		if more, err = s.More('}'); err != nil {
			return false
		}
	}
	return true
}

// Quoted reads past a string, checking it, and returns its text, quotes and all, and
// whether it holds an escape.
func (s *Scanner) Quoted() (text []byte, escaped bool, err error) {
	if s.Peek() != '"' {
		return nil, false, ErrSyntax
	}
	start := s.pos
	for i := start + 1; ; {
		i = run(s.data, i, 0)
		if i == len(s.data) {
			return nil, false, ErrSyntax
		}
		switch c := s.data[i]; c {
		case '"':
			s.pos = i + 1
			return s.data[start:s.pos:s.pos], escaped, nil
		case '\\':
			_, n := escape(s.data[i:])
			if n == 0 {
				return nil, false, ErrSyntax
			}
			i, escaped = i+n, true
		default: // a control character
			return nil, false, ErrSyntax
		}
	}
}

// Unquote reads a string and returns it as encoding/json decodes it: escapes replaced,
// and invalid UTF-8 and lone surrogates made U+FFFD.
func (s *Scanner) Unquote() (string, error) {
	if s.Peek() != '"' {
		return "", ErrSyntax
	}
	start := s.pos + 1
	i := run(s.data, start, highs)
	if i < len(s.data) && s.data[i] == '"' {
		s.pos = i + 1
		return string(s.data[start:i]), nil
	}
	return s.unquote(start, i)
}

// unquote reads the rest of a string that starts at start and needs no unquoting up
// to i. Its room is taken once, the quoted length, which bounds the unquoted one but
// for bytes outside UTF-8, each of which becomes three: grown by doubling and then
// copied into a string, it was a quarter of what record --jsonl allocated. The string
// keeps that room, more than it needs only for text of many escapes (\u0041 takes six
// bytes for one); what callers unquote they mostly let go soon.
func (s *Scanner) unquote(start, i int) (string, error) {
	var b strings.Builder
	b.Grow(closing(s.data, i) - start)
	b.Write(s.data[start:i])
	for {
		j := run(s.data, i, highs)
		b.Write(s.data[i:j])
		if i = j; i == len(s.data) {
			return "", ErrSyntax
		}
		switch c := s.data[i]; {
		case c == '"':
			s.pos = i + 1
			return b.String(), nil
		case c == '\\' && i+1 < len(s.data) && short[s.data[i+1]] != 0:
			b.WriteByte(short[s.data[i+1]])
			i += 2
		case c == '\\':
			r, n := escape(s.data[i:])
			if n == 0 {
				return "", ErrSyntax
			}
			if utf16.IsSurrogate(r) {
				// A valid pair makes one character; anything else is a replacement
				// character for the first half alone.
				if second, m := escape(s.data[i+n:]); m == 6 {
					if pair := utf16.DecodeRune(r, second); pair != utf8.RuneError {
						r, n = pair, n+m
					}
				}
			}
			b.WriteRune(r) // a lone surrogate is written as U+FFFD
			i += n
		case c < ' ':
			return "", ErrSyntax
		default:
			r, size := utf8.DecodeRune(s.data[i:])
			b.WriteRune(r)
			i += size
		}
	}
}

// short are the escapes of one character, by the character after the backslash: most
// of those in text (\n, \t, \"), which unquote writes without escape's general way.
var short = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// closing is where the string read up to i ends: at its closing quote, the first not
// escaped by an odd number of backslashes, or at the end of data. What unquote refuses
// on the way does not matter here: it only sizes unquote's room.
func closing(data []byte, i int) int {
	for {
		q := bytes.IndexByte(data[i:], '"')
		if q < 0 {
			return len(data)
		}
		q += i
		n := 0 // the backslashes before it, back to i: none before i (see unquote)
		for q-n > i && data[q-n-1] == '\\' {
			n++
		}
		if n%2 == 0 {
			return q
		}
		i = q + 1
	}
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// run is where the run of bytes from b[i] ends that are none of a quote, a backslash
// and a control character, nor, if high is highs, a byte outside ASCII: at one of them
// or at the end of b. It looks at 8 bytes at a time, with the bit tricks of "Bit
// Twiddling Hacks": (v-ones)&^v&highs is not 0 exactly when a byte of v is 0, and
// (v-n*ones)&^v&highs when one is below n.
func run[T string | []byte](b T, i int, high uint64) int {
	for ; i+8 <= len(b); i += 8 {
		x := load64(b, i)
		quote, backslash := x^('"'*ones), x^('\\'*ones)
		if ((x-0x20*ones)&^x|(quote-ones)&^quote|(backslash-ones)&^backslash|x&high)&highs != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < ' ' || c == '"' || c == '\\' || c&byte(high) != 0 {
			break
		}
	}
	return i
}

// load64 reads the 8 bytes from b[i] as a little-endian number, as one load: the
// compiler merges the eight.
func load64[T string | []byte](b T, i int) uint64 {
	b = b[i : i+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// escape reads the escape that b starts with, if it starts with one, and returns the
// code unit it stands for and its length, 0 if it is not one.
func escape(b []byte) (rune, int) {
	if len(b) < 2 || b[0] != '\\' {
		return 0, 0
	}
	if r := short[b[1]]; r != 0 {
		return rune(r), 2
	}
	if b[1] != 'u' || len(b) < 6 {
		return 0, 0
	}
	var r rune
	for _, c := range b[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, 0
		}
		r = r*16 + rune(c)
	}
	return r, 6
}

// Literal reads a number, true, false or null, and returns its text.
func (s *Scanner) Literal() ([]byte, error) {
	switch s.Peek() {
	case 't':
		return s.word("true")
	case 'f':
		return s.word("false")
	case 'n':
		return s.word("null")
	}
	// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
	b, start := s.data, s.pos
	i := start
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return nil, ErrSyntax
	}
	if i < len(b) && b[i] == '.' {
		if j := digits(b, i+1); j > i+1 {
			i = j
		} else {
			return nil, ErrSyntax
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if j := digits(b, i); j > i {
			i = j
		} else {
			return nil, ErrSyntax
		}
	}
	s.pos = i
	return b[start:i], nil
}

// digits is where the run of digits at b[i:] ends.
func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// word reads the literal w, which the next byte starts, and returns its text.
func (s *Scanner) word(w string) ([]byte, error) {
	start := s.pos
	if len(s.data)-start < len(w) || string(s.data[start:start+len(w)]) != w {
		return nil, ErrSyntax
	}
	s.pos += len(w)
	return s.data[start:s.pos], nil
}

// Skip reads past the next value, checking it, and returns its text. depth is how
// many containers around the value are open, for the bound on nesting.
func (s *Scanner) Skip(depth int) ([]byte, error) {
	c := s.Peek()
	start := s.pos
	switch c {
	case '"':
		text, _, err := s.Quoted()
		return text, err
	case '{', '[':
	default:
		return s.Literal()
	}
	// Containers are skipped without recursion, keeping what each open one ends with.
	var stack [64]byte
	ends := stack[:0]
	for {
		switch c := s.Peek(); c {
		case '{', '[':
			if depth+len(ends) >= MaxDepth {
				return nil, ErrTooDeep
			}
			end := c + 2 // '}' and ']' are two past '{' and '['
			if !s.Open(end) {
				break
			}
			ends = append(ends, end)
			if end == '}' {
				if err := s.key(); err != nil {
					return nil, err
				}
			}
			continue
		case '"':
			if _, _, err := s.Quoted(); err != nil {
				return nil, err
			}
		default:
			if _, err := s.Literal(); err != nil {
				return nil, err
			}
		}
		// A value has ended: close the containers it ends.
		for {
			if len(ends) == 0 {
				return s.data[start:s.pos], nil
			}
			more, err := s.More(ends[len(ends)-1])
			if err != nil {
				return nil, err
			}
			if more {
				break
			}
			ends = ends[:len(ends)-1]
		}
		if ends[len(ends)-1] == '}' {
			if err := s.key(); err != nil {
				return nil, err
			}
		}
	}
}

// Compact says whether data is one JSON value, as encoding/json reads it, with no white
// space outside its strings: text json.Compact would leave as it is.
func Compact(data []byte) bool {
	s := New(data)
	_, err := s.Skip(0)
	return err == nil && s.pos == len(data) && !s.spaced
}

// key reads past a member's name and the colon after it.
func (s *Scanner) key() error {
	if _, _, err := s.Quoted(); err != nil {
		return err
	}
	return s.Next(':')
}

// AppendHTMLEscape appends src to dst as json.HTMLEscape writes it: <, > and & as
// \u003c, \u003e and \u0026, and U+2028 and U+2029 as \u2028 and \u2029, so that
// JSON can sit inside HTML. It looks at eight bytes at a time for one that may need
// it, where encoding/json looks at each.
func AppendHTMLEscape(dst, src []byte) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for i := htmlRun(src, 0); i < len(src); i = htmlRun(src, i) {
		switch c := src[i]; {
		case c != 0xE2:
			dst = append(append(dst, src[start:i]...), '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			start = i + 1
		case i+2 < len(src) && src[i+1] == 0x80 && src[i+2]&^1 == 0xA8:
			dst = append(append(dst, src[start:i]...), '\\', 'u', '2', '0', '2', hex[src[i+2]&0xF])
			start = i + 3
		}
		i++
	}
	return append(dst, src[start:]...)
}

// htmlRun is where the run of bytes from b[i] ends that are none of <, >, & and the
// first byte of U+2028 and U+2029: at one of them or at the end of b. It is run's loop
// for other bytes; one loop for both would test all seven, each time.
func htmlRun[T string | []byte](b T, i int) int {
	for ; i+8 <= len(b); i += 8 {
		x := load64(b, i)
		lt, gt, amp, e2 := x^('<'*ones), x^('>'*ones), x^('&'*ones), x^(0xE2*ones)
		if ((lt-ones)&^lt|(gt-ones)&^gt|(amp-ones)&^amp|(e2-ones)&^e2)&highs != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '<' || c == '>' || c == '&' || c == 0xE2 {
			break
		}
	}
	return i
}

// AppendString appends s as encoding/json writes a string, with its HTML escaping
// (<, > and & as \u003c, \u003e and \u0026) or without: quotes, backslashes and
// control characters escaped, U+2028 and U+2029 too (some JavaScript readers take
// them for line ends), and bytes that are not UTF-8 as U+FFFD.
func AppendString(dst []byte, s string, html bool) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	next := func(i int) int {
		j := run(s, i, highs)
		if html {
			j = htmlRun(s[:j], i)
		}
		return j
	}
	for i := next(0); i < len(s); i = next(i) {
		if c := s[i]; c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default: // another control character, or <, > or &
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(append(dst, s[start:i]...), `\ufffd`...)
			start = i + size
		case r == '\u2028' || r == '\u2029':
			dst = append(append(dst, s[start:i]...), '\\', 'u', '2', '0', '2', hex[r&0xF])
			start = i + size
		}
		i += size
	}
	return append(append(dst, s[start:]...), '"')
}

// AppendText appends src, JSON, to dst with each escape in its strings written as the
// character it stands for (\n a line end, \u00e9 é, \" a quote, a surrogate pair one
// character, a lone half U+FFFD): no longer JSON, but the text a reader sees, whose
// words are words ("\nwalrus" is a line end and walrus). In valid JSON only strings hold
// a backslash; one that starts no escape is kept.
func AppendText(dst, src []byte) []byte {
	dst, _ = AppendTextAt(dst, src, nil)
	return dst
}

// Escape is where an escape that AppendTextAt wrote as its character was: src[Src:SrcEnd]
// became the text's [Text:TextEnd], counted from where AppendTextAt began to append.
type Escape struct{ Src, SrcEnd, Text, TextEnd int }

// AppendTextAt is AppendText, and appends to at each escape it wrote as its character,
// in order: what reads the text for something may say where src holds it.
func AppendTextAt(dst, src []byte, at []Escape) ([]byte, []Escape) {
	i := bytes.IndexByte(src, '\\')
	if i < 0 {
		return append(dst, src...), at
	}
	base, start := len(dst), 0
	for i >= 0 {
		dst = append(dst, src[start:i]...)
		r, n := escape(src[i:])
		switch {
		case n == 0:
			dst, n = append(dst, '\\'), 1
		case utf16.IsSurrogate(r):
			if second, m := escape(src[i+n:]); m == 6 {
				if pair := utf16.DecodeRune(r, second); pair != utf8.RuneError {
					r, n = pair, n+m
				}
			}
			fallthrough // a lone half is written as U+FFFD
		default:
			from := len(dst)
			dst = utf8.AppendRune(dst, r)
			at = append(at, Escape{Src: i, SrcEnd: i + n, Text: from - base, TextEnd: len(dst) - base})
		}
		start = i + n
		if i = bytes.IndexByte(src[start:], '\\'); i >= 0 {
			i += start
		}
	}
	return append(dst, src[start:]...), at
}

// AppendHTMLUnescape appends src, JSON, to dst with the escapes AppendHTMLEscape makes of
// <, > and & written as the characters again: the same JSON, as text reads it. An
// escaped backslash before "u003c" is left as it is; so are U+2028 and U+2029, which
// some JavaScript readers take for line ends.
func AppendHTMLUnescape(dst, src []byte) []byte {
	start := 0
	for i := bytes.IndexByte(src, '\\'); i >= 0 && i+1 < len(src); {
		if src[i+1] == 'u' && i+6 <= len(src) && src[i+2] == '0' && src[i+3] == '0' {
			var c byte
			switch string(bytes.ToLower(src[i+4 : i+6])) {
			case "3c":
				c = '<'
			case "3e":
				c = '>'
			case "26":
				c = '&'
			}
			if c != 0 {
				dst = append(append(dst, src[start:i]...), c)
				start = i + 6
			}
		}
		next := bytes.IndexByte(src[i+2:], '\\') // past the escape's second byte
		if next < 0 {
			break
		}
		i += 2 + next
	}
	return append(dst, src[start:]...)
}
