package memory

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/agmem/agmem/internal/jsonscan"
)

// DecodeEntry is json.Unmarshal(raw, &e): the same entry, or an error where it errs.
// It reads what agmem writes, {"observation":{…}} or {"event":{…}} with each member
// once, in one pass where encoding/json makes two (checking the text, then decoding
// it), each slower: decoding records and the journal was a quarter of the search
// index's reading. Anything else (a key in another case, a null, a repeated member, an
// error) it leaves to encoding/json, which says what the text means.
func DecodeEntry(raw []byte) (Entry, error) {
	if e, ok := scanEntry(raw); ok {
		return e, nil
	}
	var e Entry
	err := json.Unmarshal(raw, &e)
	return e, err
}

// scanEntry reads raw as DecodeEntry does, or says !ok.
func scanEntry(raw []byte) (e Entry, ok bool) {
	s := jsonscan.New(raw)
	if s.Peek() != '{' || !s.Open('}') {
		return e, false
	}
	key, escaped, err := s.Quoted()
	if err != nil || escaped || s.Next(':') != nil || s.Peek() != '{' {
		return e, false
	}
	var read bool
	switch string(key) {
	case `"observation"`:
		e.Observation = &Observation{}
		read = members(&s, observationKeys[:], e.Observation.member)
	case `"event"`:
		e.Event = &Event{}
		read = members(&s, eventKeys[:], e.Event.member)
	}
	if !read {
		return Entry{}, false
	}
	if more, err := s.More('}'); more || err != nil || !s.End() {
		return Entry{}, false
	}
	return e, true
}

// members reads an object's members, each with member, given its key's index in keys:
// each key once, and no key encoding/json might take for one of keys in another case.
// A key not of keys is skipped, as encoding/json passes over a member no field takes.
func members(s *jsonscan.Scanner, keys []string, member func(s *jsonscan.Scanner, k int) bool) bool {
	var seen uint64
	for more := s.Open('}'); more; {
		key, escaped, err := s.Quoted()
		if err != nil || escaped || s.Next(':') != nil {
			return false
		}
		switch k := keyIn(keys, key[1:len(key)-1]); {
		case k == badKey || k >= 0 && seen&(1<<k) != 0:
			return false
		case k == otherKey:
			if _, err := s.Skip(2); err != nil { // in the entry's object and its kind's
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

const (
	otherKey = -1
	badKey   = -2 // a key encoding/json might take for another in another case
)

// keyIn is key's index in keys, otherKey, or badKey: encoding/json matches a key to a
// field ignoring case, Unicode's folding included, so a key that matches one in
// another case, or holds a byte outside ASCII, is bad.
func keyIn(keys []string, key []byte) int {
	for _, c := range key {
		if c >= utf8.RuneSelf {
			return badKey
		}
	}
	for k, name := range keys {
		if string(key) == name {
			return k
		}
		if bytes.EqualFold(key, []byte(name)) {
			return badKey
		}
	}
	return otherKey
}

var observationKeys = [...]string{"id", "session_id", "timestamp", "tool_name", "arguments", "result", "memory_type",
	"summary", "source", "tool_use_id", "cwd", "agent_id", "prompt_id", "duration_ms", "error", "interrupted",
	"no_result", "redactions", "truncated", "withheld"}

// member reads the member of o whose key is observationKeys[k].
func (o *Observation) member(s *jsonscan.Scanner, k int) bool {
	switch observationKeys[k] {
	case "id":
		return str(s, &o.ID)
	case "session_id":
		return str(s, &o.SessionID)
	case "timestamp":
		return stamp(s, &o.Timestamp)
	case "tool_name":
		return str(s, &o.ToolName)
	case "arguments":
		return rawValue(s, &o.Arguments)
	case "result":
		return rawValue(s, &o.Result)
	case "memory_type":
		return str(s, (*string)(&o.MemoryType))
	case "summary":
		return str(s, &o.Summary)
	case "source":
		return str(s, &o.Source)
	case "tool_use_id":
		return str(s, &o.ToolUseID)
	case "cwd":
		return str(s, &o.Cwd)
	case "agent_id":
		return str(s, &o.AgentID)
	case "prompt_id":
		return str(s, &o.PromptID)
	case "duration_ms":
		var n int64
		o.DurationMS = &n
		return integer(s, &n, 64)
	case "error":
		return str(s, &o.Error)
	case "interrupted":
		return boolean(s, &o.Interrupted)
	case "no_result":
		return boolean(s, &o.NoResult)
	case "redactions":
		return integer(s, &o.Redactions, strconv.IntSize)
	case "truncated":
		o.Truncated = map[string]int{}
		return object(s, func(s *jsonscan.Scanner, key string) bool {
			var n int
			ok := integer(s, &n, strconv.IntSize)
			o.Truncated[key] = n
			return ok
		})
	case "withheld":
		return str(s, &o.Withheld)
	}
	return false
}

var eventKeys = [...]string{"id", "session_id", "timestamp", "event", "text", "attrs", "source", "redactions"}

// member reads the member of ev whose key is eventKeys[k].
func (ev *Event) member(s *jsonscan.Scanner, k int) bool {
	switch eventKeys[k] {
	case "id":
		return str(s, &ev.ID)
	case "session_id":
		return str(s, &ev.SessionID)
	case "timestamp":
		return stamp(s, &ev.Timestamp)
	case "event":
		return str(s, &ev.Name)
	case "text":
		return str(s, &ev.Text)
	case "attrs":
		ev.Attrs = map[string]string{}
		return object(s, func(s *jsonscan.Scanner, key string) bool {
			var v string
			ok := str(s, &v)
			ev.Attrs[key] = v
			return ok
		})
	case "source":
		return str(s, &ev.Source)
	case "redactions":
		return integer(s, &ev.Redactions, strconv.IntSize)
	}
	return false
}

// str reads a string, unquoted as encoding/json unquotes it; not a null, which leaves
// the field as it was.
func str(s *jsonscan.Scanner, dst *string) bool {
	if s.Peek() != '"' {
		return false
	}
	v, err := s.Unquote()
	*dst = v
	return err == nil
}

// stamp reads a time as encoding/json gives the literal to time.Time.
func stamp(s *jsonscan.Scanner, dst *time.Time) bool {
	if s.Peek() != '"' {
		return false
	}
	v, _, err := s.Quoted()
	return err == nil && dst.UnmarshalJSON(v) == nil
}

// rawValue reads any value whole, a copy of its text, as json.RawMessage takes it.
func rawValue(s *jsonscan.Scanner, dst *json.RawMessage) bool {
	v, err := s.Skip(2)
	*dst = bytes.Clone(v)
	return err == nil
}

// integer reads a number that is an integer of bits bits, as encoding/json sets an int
// field: not a fraction, nor an exponent, nor out of range.
func integer[T int | int64](s *jsonscan.Scanner, dst *T, bits int) bool {
	if c := s.Peek(); c != '-' && (c < '0' || c > '9') {
		return false
	}
	v, err := s.Literal()
	if err != nil {
		return false
	}
	n, err := strconv.ParseInt(string(v), 10, bits)
	*dst = T(n)
	return err == nil
}

// boolean reads true or false.
func boolean(s *jsonscan.Scanner, dst *bool) bool {
	v, err := s.Literal()
	switch {
	case err != nil:
		return false
	case string(v) == "true":
		*dst = true
	case string(v) == "false":
		*dst = false
	default:
		return false
	}
	return true
}

// object reads an object of string keys, unquoted as encoding/json unquotes them, each
// value with value; not a null.
func object(s *jsonscan.Scanner, value func(s *jsonscan.Scanner, key string) bool) bool {
	if s.Peek() != '{' {
		return false
	}
	for more := s.Open('}'); more; {
		key, err := s.Unquote()
		if err != nil || s.Next(':') != nil || !value(s, key) {
			return false
		}
		if more, err = s.More('}'); err != nil {
			return false
		}
	}
	return true
}
