package capture

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// reader reads JSON text a value at a time, giving what encoding/json would decode:
// strings unquoted as it unquotes them (invalid UTF-8 and lone surrogates become
// U+FFFD), numbers and literals as their text. Input is read once, where going through
// encoding/json scanned it once to check it and again for each value taken out. It
// refuses all that encoding/json refuses, and may refuse more: its callers fall back on
// encoding/json where its error is what the user sees.
type reader struct {
	data []byte
	pos  int
	buf  []byte // scratch for unquoting
}

var errSyntax = errors.New("invalid JSON")

// maxNesting is encoding/json's bound on nesting, less one: refusing a little more
// than it does is safe.
const maxNesting = 10000 - 1

// space skips white space and returns the byte after it, or 0 at the end.
func (r *reader) space() byte {
	for r.pos < len(r.data) {
		switch c := r.data[r.pos]; c {
		case ' ', '\t', '\n', '\r':
			r.pos++
		default:
			return c
		}
	}
	return 0
}

// next skips white space and reads the byte c, or fails.
func (r *reader) next(c byte) error {
	if r.space() != c {
		return errSyntax
	}
	r.pos++
	return nil
}

// end says whether only white space is left.
func (r *reader) end() bool { return r.space() == 0 && r.pos == len(r.data) }

// more reads, after a member or an element of a container that closes with close,
// the comma before the next one (true) or the closing delimiter (false).
func (r *reader) more(close byte) (bool, error) {
	switch r.space() {
	case ',':
		r.pos++
		return true, nil
	case close:
		r.pos++
		return false, nil
	}
	return false, errSyntax
}

// open reads the opening delimiter of a container that closes with close, and says
// whether a first member or element follows.
func (r *reader) open(close byte) bool {
	r.pos++
	if r.space() == close {
		r.pos++
		return false
	}
	return true
}

// str reads a string and returns it unquoted.
func (r *reader) str() (string, error) {
	if r.space() != '"' {
		return "", errSyntax
	}
	start := r.pos + 1
	for i := start; i < len(r.data); i++ {
		switch c := r.data[i]; {
		case c == '"':
			r.pos = i + 1
			return string(r.data[start:i]), nil
		case c == '\\' || c < ' ' || c >= utf8.RuneSelf:
			return r.unquote(start, i)
		}
	}
	return "", errSyntax
}

// skipStr reads past a string, checking it.
func (r *reader) skipStr() error {
	if r.space() != '"' {
		return errSyntax
	}
	for i := r.pos + 1; i < len(r.data); i++ {
		switch c := r.data[i]; {
		case c == '"':
			r.pos = i + 1
			return nil
		case c < ' ':
			return errSyntax
		case c == '\\':
			switch {
			case i+1 < len(r.data) && strings.IndexByte(`"\/bfnrt`, r.data[i+1]) >= 0:
				i++
			case hex4(r.data[i:]) >= 0:
				i += 5
			default:
				return errSyntax
			}
		}
	}
	return errSyntax
}

// unquote reads the rest of a string that starts at start and has plain ASCII up to i.
func (r *reader) unquote(start, i int) (string, error) {
	b := append(r.buf[:0], r.data[start:i]...)
	for i < len(r.data) {
		c := r.data[i]
		switch {
		case c == '"':
			r.pos, r.buf = i+1, b
			return string(b), nil
		case c < ' ':
			return "", errSyntax
		case c == '\\':
			if i+1 >= len(r.data) {
				return "", errSyntax
			}
			switch e := r.data[i+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				rr := hex4(r.data[i:])
				if rr < 0 {
					return "", errSyntax
				}
				if utf16.IsSurrogate(rr) {
					// A valid pair makes one character; anything else is a
					// replacement character for the first half alone.
					if dec := utf16.DecodeRune(rr, hex4(r.data[i+6:])); dec != utf8.RuneError {
						b = utf8.AppendRune(b, dec)
						i += 12
						continue
					}
					rr = utf8.RuneError
				}
				b = utf8.AppendRune(b, rr)
				i += 6
				continue
			default:
				return "", errSyntax
			}
			i += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			rr, size := utf8.DecodeRune(r.data[i:])
			b = utf8.AppendRune(b, rr)
			i += size
		}
	}
	return "", errSyntax
}

// hex4 is the code unit of a \uXXXX escape that s starts with, or -1.
func hex4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// literal reads a number, true, false or null, and returns its text.
func (r *reader) literal() ([]byte, error) {
	switch r.space() {
	case 't':
		return r.word("true")
	case 'f':
		return r.word("false")
	case 'n':
		return r.word("null")
	}
	start := r.pos
	i := start
	digits := func() int {
		n := 0
		for i < len(r.data) && '0' <= r.data[i] && r.data[i] <= '9' {
			i, n = i+1, n+1
		}
		return n
	}
	if i < len(r.data) && r.data[i] == '-' {
		i++
	}
	switch n := digits(); {
	case n == 0, n > 1 && r.data[i-n] == '0':
		return nil, errSyntax
	}
	if i < len(r.data) && r.data[i] == '.' {
		i++
		if digits() == 0 {
			return nil, errSyntax
		}
	}
	if i < len(r.data) && (r.data[i] == 'e' || r.data[i] == 'E') {
		i++
		if i < len(r.data) && (r.data[i] == '+' || r.data[i] == '-') {
			i++
		}
		if digits() == 0 {
			return nil, errSyntax
		}
	}
	r.pos = i
	return r.data[start:i], nil
}

func (r *reader) word(w string) ([]byte, error) {
	start := r.pos
	if len(r.data)-start < len(w) || string(r.data[start:start+len(w)]) != w {
		return nil, errSyntax
	}
	r.pos += len(w)
	return r.data[start:r.pos], nil
}

// null reads null, and says whether it was.
func (r *reader) null() bool {
	_, err := r.word("null")
	return err == nil
}

// optString reads a string into *dst, or null, which leaves *dst as it is (as
// encoding/json decodes into a string), and says whether it was either.
func (r *reader) optString(dst *string) bool {
	if r.space() != '"' {
		return r.null()
	}
	s, err := r.str()
	*dst = s
	return err == nil
}

// float reads a number into a new float64, or null into nil, and says whether it was
// either, in float64's range.
func (r *reader) float() (*float64, bool) {
	if r.space() == 'n' {
		return nil, r.null()
	}
	lit, err := r.literal()
	if err != nil || lit[0] == 't' || lit[0] == 'f' {
		return nil, false
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	return &f, err == nil
}

// skip reads past the next value, checking it, and returns its text.
func (r *reader) skip() ([]byte, error) {
	c := r.space()
	start := r.pos
	if c != '{' && c != '[' {
		if c == '"' {
			err := r.skipStr()
			return r.data[start:r.pos], err
		}
		return r.literal()
	}
	// Containers are skipped without recursion, keeping what each open one closes with.
	var closers []byte
	for {
		switch c := r.space(); c {
		case '{', '[':
			close := byte('}')
			if c == '[' {
				close = ']'
			}
			if len(closers) == maxNesting {
				return nil, errSyntax
			}
			if !r.open(close) {
				break
			}
			closers = append(closers, close)
			if close == '}' {
				if err := r.skipStr(); err != nil {
					return nil, err
				}
				if err := r.next(':'); err != nil {
					return nil, err
				}
			}
			continue
		case '"':
			if err := r.skipStr(); err != nil {
				return nil, err
			}
		default:
			if _, err := r.literal(); err != nil {
				return nil, err
			}
		}
		// A value has ended: close the containers it ends.
		for {
			if len(closers) == 0 {
				return r.data[start:r.pos], nil
			}
			close := closers[len(closers)-1]
			more, err := r.more(close)
			if err != nil {
				return nil, err
			}
			if more {
				break
			}
			closers = closers[:len(closers)-1]
		}
		if closers[len(closers)-1] == '}' {
			if err := r.skipStr(); err != nil {
				return nil, err
			}
			if err := r.next(':'); err != nil {
				return nil, err
			}
		}
	}
}
