package history

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"time"
	"unicode/utf8"

	"github.com/agmem/agmem/memory"
)

// lineHead is what the first pass reads of a record's line.
type lineHead struct {
	id, session string
	at          time.Time
}

// readHead reads a line's id, session and time, and checks what Entry.Validate checks;
// every other member is scanned, not kept, unless whole is set: then the line is read
// as an entry in full, every member of the type it must have.
func readHead(line []byte, whole bool) (lineHead, error) {
	if whole {
		var e memory.Entry
		if err := json.Unmarshal(line, &e); err != nil {
			return lineHead{}, err
		}
		if err := e.Validate(); err != nil {
			return lineHead{}, err
		}
		return lineHead{id: e.ID(), session: e.Session(), at: e.Time()}, nil
	}
	var eh entryHead
	h, event, ok := scanHead(line)
	switch {
	case !ok:
		var err error
		if eh, err = decodeHead(line); err != nil {
			return lineHead{}, err
		}
	case event:
		eh.Event = &h
	default:
		eh.Observation = &h
	}
	if err := eh.entry().Validate(); err != nil {
		return lineHead{}, err
	}
	got := eh.Observation
	if got == nil {
		got = eh.Event
	}
	return lineHead{id: got.ID, session: got.SessionID, at: got.Timestamp}, nil
}

// entryHead is what the first pass reads of an entry.
type entryHead struct {
	Observation *headFields `json:"observation"`
	Event       *headFields `json:"event"`
}

// headFields are the members of an observation or an event that the first pass reads.
type headFields struct {
	ID        string    `json:"id"`
	SessionID string    `json:"session_id"`
	Timestamp time.Time `json:"timestamp"`
	ToolName  string    `json:"tool_name"`
}

// entry is an entry holding no more than the head, to be validated.
func (eh entryHead) entry() memory.Entry {
	var e memory.Entry
	if o := eh.Observation; o != nil {
		e.Observation = &memory.Observation{ID: o.ID, SessionID: o.SessionID, ToolName: o.ToolName}
	}
	if ev := eh.Event; ev != nil {
		e.Event = &memory.Event{ID: ev.ID, SessionID: ev.SessionID}
	}
	return e
}

// decodeHead reads a line's head with encoding/json: it is what a line means.
func decodeHead(line []byte) (entryHead, error) {
	var eh entryHead
	err := json.Unmarshal(line, &eh)
	return eh, err
}

// scanHead reads a line's head as decodeHead does, in one pass over the line where
// json.Unmarshal makes two (checking the line, then decoding it), each slower: that was
// most of the first pass. It reads only the lines flushes write, {"observation":{…}} or
// {"event":{…}} with the four members each once, as plain strings, and says !ok of any
// other (a key in another case, with an escape, a repeated member…), to be read by
// decodeHead; it never says ok of a line that is not JSON.
func scanHead(line []byte) (h headFields, event bool, ok bool) {
	s := scanner{b: line}
	if !s.skip('{') || s.peek() != '"' {
		return
	}
	key, plain := s.str()
	switch {
	case plain && string(key) == "observation":
	case plain && string(key) == "event":
		event = true
	default:
		return
	}
	if !s.skip(':') || !s.skip('{') {
		return
	}
	var seen [len(headKeys)]bool
	for first := true; ; first = false {
		if first && s.skip('}') {
			break
		}
		if s.peek() != '"' {
			return
		}
		key, plain := s.str()
		k := headKey(key)
		if !plain || k == badKey || !s.skip(':') {
			return
		}
		if k == otherKey {
			if !s.value(0) {
				return
			}
		} else {
			if seen[k] || s.peek() != '"' {
				return
			}
			seen[k] = true
			start := s.i
			v, plain := s.str()
			switch {
			case v == nil:
				return
			case k == timestampKey:
				// What the decoder gives time.Time: the literal, quotes, escapes and all.
				if h.Timestamp.UnmarshalJSON(line[start:s.i]) != nil {
					return
				}
			case !plain || !utf8.Valid(v):
				return // the decoder would unescape or mend it
			case k == idKey:
				h.ID = string(v)
			case k == sessionKey:
				h.SessionID = string(v)
			case k == toolKey:
				h.ToolName = string(v)
			}
		}
		if s.skip('}') {
			break
		}
		if !s.skip(',') {
			return
		}
	}
	if !s.skip('}') {
		return
	}
	if s.ws(); s.i != len(line) {
		return
	}
	return h, event, true
}

var headKeys = [...]string{"id", "session_id", "timestamp", "tool_name"}

const (
	idKey = iota
	sessionKey
	timestampKey
	toolKey
	otherKey = -1
	badKey   = -2 // a key the decoder might take for one of headKeys
)

// headKey says which of headKeys key is. encoding/json matches a key to a field
// ignoring case, Unicode's folding included: a key that matches one in another case, or
// holds a byte outside ASCII, is bad.
func headKey(key []byte) int {
	for _, c := range key {
		if c >= utf8.RuneSelf {
			return badKey
		}
	}
	for k, name := range headKeys {
		if string(key) == name {
			return k
		}
		if bytes.EqualFold(key, []byte(name)) {
			return badKey
		}
	}
	return otherKey
}

// scanner reads JSON as encoding/json's checkValid does, or stops.
type scanner struct {
	b []byte
	i int
}

// maxDepth bounds how deep value goes, far below encoding/json's own limit.
const maxDepth = 1000

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek is the next byte that is not white space, or 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i == len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// skip moves past c, the next byte that is not white space, and says whether it was.
func (s *scanner) skip(c byte) bool {
	if s.peek() != c {
		return false
	}
	s.i++
	return true
}

// str reads the string at s.i: what is between its quotes (nil if it is not a valid
// string) and whether that holds no escape.
func (s *scanner) str() (raw []byte, plain bool) {
	start := s.i + 1
	i, plain := start, true
	for {
		for i+8 <= len(s.b) && !special(binary.LittleEndian.Uint64(s.b[i:])) {
			i += 8
		}
		if i == len(s.b) {
			return nil, false
		}
		switch c := s.b[i]; {
		case c == '"':
			s.i = i + 1
			return s.b[start:i:i], plain
		case c == '\\':
			plain = false
			n := escapeLen(s.b[i+1:])
			if n == 0 {
				return nil, false
			}
			i += 1 + n
		case c < 0x20:
			return nil, false
		default:
			i++
		}
	}
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// special says whether one of the 8 bytes in x is a quote, a backslash or a control
// character, with the bit tricks of "Bit Twiddling Hacks": (v-ones)&^v&highs is not 0
// exactly when a byte of v is 0, and (v-n*ones)&^v&highs when one is below n.
func special(x uint64) bool {
	quote, backslash := x^('"'*ones), x^('\\'*ones)
	return ((x-0x20*ones)&^x|(quote-ones)&^quote|(backslash-ones)&^backslash)&highs != 0
}

// escapeLen is the length of the escape that b starts (after its backslash), 0 if it
// is not one.
func escapeLen(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	switch b[0] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 1
	case 'u':
		if len(b) < 5 {
			return 0
		}
		for _, c := range b[1:5] {
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return 0
			}
		}
		return 5
	}
	return 0
}

// value moves past the value at s.i, and says whether it was valid.
func (s *scanner) value(depth int) bool {
	if depth > maxDepth {
		return false
	}
	switch s.peek() {
	case '"':
		raw, _ := s.str()
		return raw != nil
	case '{':
		s.i++
		if s.skip('}') {
			return true
		}
		for {
			if s.peek() != '"' {
				return false
			}
			if key, _ := s.str(); key == nil || !s.skip(':') || !s.value(depth+1) {
				return false
			}
			if s.skip('}') {
				return true
			}
			if !s.skip(',') {
				return false
			}
		}
	case '[':
		s.i++
		if s.skip(']') {
			return true
		}
		for {
			if !s.value(depth + 1) {
				return false
			}
			if s.skip(']') {
				return true
			}
			if !s.skip(',') {
				return false
			}
		}
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	default:
		return s.number()
	}
}

func (s *scanner) literal(word string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		return false
	}
	s.i += len(word)
	return true
}

// number moves past a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() bool {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		if j := digits(b, i+1); j > i+1 {
			i = j
		} else {
			return false
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
			return false
		}
	}
	s.i = i
	return true
}

// digits is where the run of digits at b[i:] ends.
func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}
