package jsonscan

import (
	"bytes"
	"strconv"
	"time"
	"unicode/utf8"
)

// What a reader that stands in for encoding/json's decoding into a struct needs: which
// field a member's name is, and a field's value read as encoding/json sets it, each
// saying false of what the reader should leave to encoding/json (a null among them,
// which leaves a field as it was).

// Field is the index in names of a member's name key, quotes taken off and unescaped,
// or NotAField, or FoldedField for a name encoding/json might take for one of names:
// it matches a name to a field ignoring case, Unicode's folding included, so a name
// that matches one in another case, or holds a byte outside ASCII, is one.
func Field(names []string, key []byte) int {
	for _, c := range key {
		if c >= utf8.RuneSelf {
			return FoldedField
		}
	}
	for k, name := range names {
		if string(key) == name {
			return k
		}
		if bytes.EqualFold(key, []byte(name)) {
			return FoldedField
		}
	}
	return NotAField
}

const (
	NotAField   = -1
	FoldedField = -2
)

// Fields reads an object, which must be next, as encoding/json decodes one into a
// struct whose fields are named keys (at most 64): member reads the value of each
// member one of keys names, given its index, and a member of another name is passed
// over. It says false, leaving the object to encoding/json, of a name with an escape
// or one encoding/json might take for one of keys in another case (Field), of a name
// given twice, of a value member refuses, and of text that is not JSON. depth is how
// many containers are open around the object, for the bound on nesting.
func (s *Scanner) Fields(keys []string, depth int, member func(s *Scanner, k int) bool) bool {
	if len(keys) > 64 {
		panic("jsonscan: Fields of more than 64 keys")
	}
	if s.Peek() != '{' {
		return false
	}
	var seen uint64
	for more := s.Open('}'); more; {
		key, escaped, err := s.Quoted()
		if err != nil || escaped || s.Next(':') != nil {
			return false
		}
		switch k := Field(keys, key[1:len(key)-1]); {
		case k == FoldedField || k >= 0 && seen&(1<<k) != 0:
			return false
		case k == NotAField:
			if _, err := s.Skip(depth + 1); err != nil {
				return false
			}
		default:
			seen |= 1 << k
			if !member(s, k) {
				return false
			}
		}
		if more, err = s.More('}'); err != nil {
			return false
		}
	}
	return true
}

// String reads a string into *dst, unquoted as encoding/json unquotes it.
func (s *Scanner) String(dst *string) bool {
	if s.Peek() != '"' {
		return false
	}
	v, err := s.Unquote()
	*dst = v
	return err == nil
}

// Time reads a time into *dst as encoding/json does: its quoted text, escapes and all,
// to time.Time's UnmarshalJSON.
func (s *Scanner) Time(dst *time.Time) bool {
	text, _, err := s.Quoted()
	return err == nil && dst.UnmarshalJSON(text) == nil
}

// Int reads a number into *dst as encoding/json sets an integer field: a whole one in
// its range, not a fraction, nor an exponent.
func Int[T int | int64](s *Scanner, dst *T) bool {
	if c := s.Peek(); c != '-' && (c < '0' || c > '9') {
		return false
	}
	lit, err := s.Literal()
	if err != nil {
		return false
	}
	bits := 64
	if _, isInt := any(*dst).(int); isInt {
		bits = strconv.IntSize
	}
	n, err := strconv.ParseInt(string(lit), 10, bits)
	*dst = T(n)
	return err == nil
}
