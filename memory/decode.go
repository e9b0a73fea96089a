package memory

import (
	"bytes"
	"encoding/json"

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
	if err != nil || escaped || s.Next(':') != nil {
		return e, false
	}
	var read bool
	switch string(key) {
	case `"observation"`:
		e.Observation = &Observation{}
		read = s.Fields(observationKeys[:], 1, e.Observation.member)
	case `"event"`:
		e.Event = &Event{}
		read = s.Fields(eventKeys[:], 1, e.Event.member)
	}
	if !read {
		return Entry{}, false
	}
	if more, err := s.More('}'); more || err != nil || !s.End() {
		return Entry{}, false
	}
	return e, true
}

var observationKeys = [...]string{"id", "session_id", "timestamp", "tool_name", "arguments", "result", "memory_type",
	"summary", "source", "tool_use_id", "cwd", "agent_id", "prompt_id", "duration_ms", "error", "interrupted",
	"no_result", "redactions", "truncated", "withheld"}

// member reads the member of o whose key is observationKeys[k].
func (o *Observation) member(s *jsonscan.Scanner, k int) bool {
	switch observationKeys[k] {
	case "id":
		return s.String(&o.ID)
	case "session_id":
		return s.String(&o.SessionID)
	case "timestamp":
		return s.Time(&o.Timestamp)
	case "tool_name":
		return s.String(&o.ToolName)
	case "arguments":
		return rawValue(s, &o.Arguments)
	case "result":
		return rawValue(s, &o.Result)
	case "memory_type":
		return s.String((*string)(&o.MemoryType))
	case "summary":
		return s.String(&o.Summary)
	case "source":
		return s.String(&o.Source)
	case "tool_use_id":
		return s.String(&o.ToolUseID)
	case "cwd":
		return s.String(&o.Cwd)
	case "agent_id":
		return s.String(&o.AgentID)
	case "prompt_id":
		return s.String(&o.PromptID)
	case "duration_ms":
		var n int64
		o.DurationMS = &n
		return jsonscan.Int(s, &n)
	case "error":
		return s.String(&o.Error)
	case "interrupted":
		return boolean(s, &o.Interrupted)
	case "no_result":
		return boolean(s, &o.NoResult)
	case "redactions":
		return jsonscan.Int(s, &o.Redactions)
	case "truncated":
		o.Truncated = map[string]int{}
		return s.Object(func(s *jsonscan.Scanner, key string) bool {
			var n int
			ok := jsonscan.Int(s, &n)
			o.Truncated[key] = n
			return ok
		})
	case "withheld":
		return s.String(&o.Withheld)
	}
	return false
}

var eventKeys = [...]string{"id", "session_id", "timestamp", "event", "text", "attrs", "source", "redactions"}

// member reads the member of ev whose key is eventKeys[k].
func (ev *Event) member(s *jsonscan.Scanner, k int) bool {
	switch eventKeys[k] {
	case "id":
		return s.String(&ev.ID)
	case "session_id":
		return s.String(&ev.SessionID)
	case "timestamp":
		return s.Time(&ev.Timestamp)
	case "event":
		return s.String(&ev.Name)
	case "text":
		return s.String(&ev.Text)
	case "attrs":
		ev.Attrs = map[string]string{}
		return s.Object(func(s *jsonscan.Scanner, key string) bool {
			var v string
			ok := s.String(&v)
			ev.Attrs[key] = v
			return ok
		})
	case "source":
		return s.String(&ev.Source)
	case "redactions":
		return jsonscan.Int(s, &ev.Redactions)
	}
	return false
}

// rawValue reads any value whole, a copy of its text, as json.RawMessage takes it.
func rawValue(s *jsonscan.Scanner, dst *json.RawMessage) bool {
	v, err := s.Skip(2)
	*dst = bytes.Clone(v)
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
