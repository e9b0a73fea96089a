package recall

import (
	"encoding/json"
	"time"
	"unicode/utf8"

	"github.com/agmem/agmem/internal/jsonscan"
	"github.com/agmem/agmem/memory"
)

// lineHead is what the first pass reads of a record's line.
type lineHead struct {
	id, session string
	filed       string // the session id as the record holds it, which names its directory
	at          time.Time
	event       bool // the line holds an event, not an observation
}

// readHead reads a line's id, session and time, and whether it is an event, and checks
// what Entry.Validate checks; every other member is scanned, not kept, unless the line
// is a fetched branch's: then it is read as an entry in full, every member of the type
// it must have, and its session is the id as readers give it back (fromFetched).
func readHead(line []byte, fetched bool) (lineHead, error) {
	if fetched {
		e, err := memory.DecodeEntry(line)
		if err != nil {
			return lineHead{}, err
		}
		if err := e.Validate(); err != nil {
			return lineHead{}, err
		}
		return lineHead{id: e.ID(), session: ShownSession(e.Session()), filed: e.Session(), at: e.Time(), event: e.Event != nil}, nil
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
	return lineHead{id: got.ID, session: got.SessionID, filed: got.SessionID, at: got.Timestamp, event: eh.Event != nil}, nil
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
	s := jsonscan.New(line)
	if s.Peek() != '{' || !s.Open('}') {
		return
	}
	key, escaped, err := s.Quoted()
	switch {
	case err != nil || escaped:
		return
	case string(key) == `"observation"`:
	case string(key) == `"event"`:
		event = true
	default:
		return
	}
	if s.Next(':') != nil || !s.Fields(headKeys[:], 1, h.member) {
		return
	}
	more, err := s.More('}')
	if more || err != nil || !s.End() {
		return
	}
	return h, event, true
}

// member reads the member of the observation or the event whose key is headKeys[k] into
// h, and says false of one that is not as scanHead reads it.
func (h *headFields) member(s *jsonscan.Scanner, k int) bool {
	if s.Peek() != '"' {
		return false
	}
	v, escaped, err := s.Quoted()
	switch {
	case err != nil:
		return false
	case k == timestampKey:
		// What the decoder gives time.Time: the literal, quotes, escapes and all.
		return h.Timestamp.UnmarshalJSON(v) == nil
	case escaped || !utf8.Valid(v):
		return false // the decoder would unescape or mend it
	}
	switch v = v[1 : len(v)-1]; k {
	case idKey:
		h.ID = string(v)
	case sessionKey:
		h.SessionID = string(v)
	case toolKey:
		h.ToolName = string(v)
	}
	return true
}

var headKeys = [...]string{"id", "session_id", "timestamp", "tool_name"}

const (
	idKey = iota
	sessionKey
	timestampKey
	toolKey
)
