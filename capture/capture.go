package capture

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agmem/agmem/classify"
	"github.com/agmem/agmem/internal/jsonscan"
	"github.com/agmem/agmem/memory"
)

// Sources name the adapter that captured an entry.
const (
	SourceNative     = "native"
	SourceClaudeCode = "claude-code"
	SourceCodex      = "codex"
	SourceGemini     = "gemini-cli"
	SourceCursor     = "cursor"
	SourceFlags      = "cli"
)

// maxToolName bounds a tool name: it travels into paths, messages and frontmatter.
const maxToolName = 512

// maxToolUseID bounds a tool_use_id: with the session it keys the journal's index of
// calls, and bbolt keys stop at 32 KiB.
const maxToolUseID = 256

// utf8BOM is the byte-order mark some Windows tools write before UTF-8 text.
var utf8BOM = []byte("\xef\xbb\xbf")

// Decoded is what one input object became.
type Decoded struct {
	Entries []memory.Entry
	Skipped []string // why calls in the input were deliberately not captured
	// GivenID and Dated say whether the input gave the entries their ids, and their
	// times (else the time is when they were read): what the id rule asks.
	GivenID, Dated bool
}

// Native is the native observation shape of SPEC §5.1, as read from input.
type Native struct {
	ID         string          `json:"id"`
	SessionID  string          `json:"session_id"`
	Timestamp  string          `json:"timestamp"`
	ToolName   *string         `json:"tool_name"`
	Arguments  json.RawMessage `json:"arguments"`
	Result     json.RawMessage `json:"result"`
	MemoryType string          `json:"memory_type"`
	Summary    string          `json:"summary"`
	Source     string          `json:"source"`
	ToolUseID  string          `json:"tool_use_id"`
	Cwd        string          `json:"cwd"`
	AgentID    string          `json:"agent_id"`
	DurationMS *float64        `json:"duration_ms"`
	Error      string          `json:"error"`
}

// Decode reads one JSON object of any supported shape.
func Decode(data []byte, p Policy, now time.Time) (Decoded, error) {
	data = bytes.TrimSpace(bytes.TrimPrefix(data, utf8BOM))
	if len(data) == 0 || data[0] != '{' {
		return Decoded{}, errors.New("input is not a JSON object")
	}
	if n, ok := readNative(data); ok {
		return nativeLine(n, p, now)
	}
	if h, ok := readClaudeHook(data); ok {
		return h.decode(p, now)
	}
	return decodeProbed(data, p, now)
}

// decodeProbed is Decode for what readNative and readClaudeHook leave: encoding/json
// finds out what data holds.
func decodeProbed(data []byte, p Policy, now time.Time) (Decoded, error) {
	var probe struct {
		HookEvent      *string         `json:"hook_event_name"`
		ToolName       json.RawMessage `json:"tool_name"`
		Event          json.RawMessage `json:"event"`
		TurnID         json.RawMessage `json:"turn_id"`
		Timestamp      json.RawMessage `json:"timestamp"`
		ConversationID json.RawMessage `json:"conversation_id"`
		WorkspaceRoots json.RawMessage `json:"workspace_roots"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return Decoded{}, fmt.Errorf("input is not valid JSON: %w", err)
	}
	switch {
	case probe.HookEvent != nil && (probe.ConversationID != nil || probe.WorkspaceRoots != nil):
		return decodeCursorHook(data, p, now)
	case probe.HookEvent != nil && probe.TurnID != nil:
		return decodeClaudeHook(data, p, now, SourceCodex)
	case probe.HookEvent != nil && isGeminiHook(*probe.HookEvent, probe.Timestamp != nil):
		return decodeGeminiHook(data, p, now)
	case probe.HookEvent != nil:
		return decodeClaudeHook(data, p, now, SourceClaudeCode)
	case probe.ToolName != nil:
		var n Native
		if err := json.Unmarshal(data, &n); err != nil {
			return Decoded{}, fmt.Errorf("native observation: %w", err)
		}
		return nativeLine(n, p, now)
	case probe.Event != nil:
		return decodeEvent(data, p, now)
	}
	return Decoded{}, errors.New(`input is neither a native observation (no "tool_name") nor a hook payload (no "hook_event_name")`)
}

// nativeLine completes the observation of a native line, whose source is native unless
// it names another.
func nativeLine(n Native, p Policy, now time.Time) (Decoded, error) {
	if n.Source == "" {
		n.Source = SourceNative
	}
	return FromNative(n, p, now)
}

// readNative reads a native observation as json.Unmarshal would, in one pass over the
// line where Decode's probe and json.Unmarshal took four: most lines are native. It
// says false for any other shape, and for a native line that encoding/json would refuse
// or that holds what this reads no faster (a member name not in ASCII, a member of
// another type than Native's): Decode's general way then gives the same result, or its
// error. Arguments and Result are data's bytes: the sanitizer rewrites both.
func readNative(data []byte) (n Native, ok bool) {
	hasTool := false
	ok = readMembers(data, func(r *jsonscan.Scanner, name string) bool {
		var err error
		typed := true // the member is of the type Native's member is
		switch name {
		case "tool_name":
			hasTool = true
			n.ToolName = nil
			if r.Peek() == '"' {
				var s string
				s, err = r.Unquote()
				n.ToolName = &s
			} else {
				typed = null(r)
			}
		case "arguments":
			n.Arguments, err = r.Skip(1)
		case "result":
			n.Result, err = r.Skip(1)
		case "duration_ms":
			n.DurationMS, typed = float(r)
		case "hook_event_name":
			return false
		default:
			if f := n.field(name); f != nil {
				typed = optString(r, f)
			} else {
				_, err = r.Skip(1)
			}
		}
		return err == nil && typed
	})
	return n, ok && hasTool
}

// readMembers reads the JSON object data a member at a time, as encoding/json matches
// member names to fields: read gets each name in lower case, reads its value, and says
// whether it was of the type its field is. readMembers says false for anything but one
// object, for a name not in ASCII (encoding/json folds those by Unicode's rules), and
// for a member read refuses.
func readMembers(data []byte, read func(r *jsonscan.Scanner, name string) bool) bool {
	return jsonscan.Members(data, func(r *jsonscan.Scanner, name string) bool {
		for i := 0; i < len(name); i++ {
			if name[i] >= utf8.RuneSelf {
				return false
			}
		}
		return read(r, strings.ToLower(name))
	})
}

// null reads null, and says whether it was.
func null(r *jsonscan.Scanner) bool {
	if r.Peek() != 'n' {
		return false
	}
	_, err := r.Literal()
	return err == nil
}

// optString reads a string into *dst, or null, which leaves *dst as it is (as
// encoding/json decodes into a string), and says whether it was either.
func optString(r *jsonscan.Scanner, dst *string) bool {
	if r.Peek() != '"' {
		return null(r)
	}
	s, err := r.Unquote()
	*dst = s
	return err == nil
}

// float reads a number into a new float64, or null into nil, and says whether it was
// either, in float64's range.
func float(r *jsonscan.Scanner) (*float64, bool) {
	switch r.Peek() {
	case 'n':
		return nil, null(r)
	case 't', 'f':
		return nil, false
	}
	lit, err := r.Literal()
	if err != nil {
		return nil, false
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	return &f, err == nil
}

// field is the string member of n that a lower-case member name names, or nil.
func (n *Native) field(name string) *string {
	switch name {
	case "id":
		return &n.ID
	case "session_id":
		return &n.SessionID
	case "timestamp":
		return &n.Timestamp
	case "memory_type":
		return &n.MemoryType
	case "summary":
		return &n.Summary
	case "source":
		return &n.Source
	case "tool_use_id":
		return &n.ToolUseID
	case "cwd":
		return &n.Cwd
	case "agent_id":
		return &n.AgentID
	case "error":
		return &n.Error
	}
	return nil
}

// FromNative checks a native observation and completes it, or says why it is skipped.
func FromNative(n Native, p Policy, now time.Time) (Decoded, error) {
	if n.ToolName == nil || *n.ToolName == "" {
		return Decoded{}, errors.New(`"tool_name" is missing or empty`)
	}
	if err := checkSession(n.SessionID); err != nil {
		return Decoded{}, err
	}
	o := &memory.Observation{
		SessionID: n.SessionID,
		ToolName:  *n.ToolName,
		Arguments: n.Arguments,
		Result:    n.Result,
		Summary:   n.Summary,
		Source:    n.Source,
		ToolUseID: n.ToolUseID,
		Cwd:       n.Cwd,
		AgentID:   n.AgentID,
		Error:     n.Error,
		Timestamp: now,
	}
	if n.ID != "" {
		id, err := memory.NormalizeID(n.ID)
		if err != nil {
			return Decoded{}, err
		}
		o.ID = id
	}
	if n.Timestamp != "" {
		t, err := parseTime(n.Timestamp)
		if err != nil {
			return Decoded{}, err
		}
		o.Timestamp = t
	}
	if n.DurationMS != nil {
		if d := *n.DurationMS; d >= 0 && d < math.MaxInt64 {
			ms := int64(d)
			o.DurationMS = &ms
		}
	}
	if t, ok := memory.ParseType(n.MemoryType); ok {
		o.MemoryType = t
	}
	d, err := complete(o, p)
	d.GivenID, d.Dated = n.ID != "", n.Timestamp != ""
	return d, err
}

// complete fills what the input left out and applies the capture policy.
func complete(o *memory.Observation, p Policy) (Decoded, error) {
	if len(o.ToolName) > maxToolName {
		return Decoded{}, fmt.Errorf("tool_name is longer than %d bytes", maxToolName)
	}
	if len(o.ToolUseID) > maxToolUseID {
		return Decoded{}, fmt.Errorf("tool_use_id is longer than %d bytes", maxToolUseID)
	}
	o.Source = sourceName(o.Source)
	if ok, why := p.Rules.Capture(o.ToolName, o.Result, o.Error != ""); !ok {
		return Decoded{Skipped: []string{o.ToolName + ": " + why}}, nil
	}
	o.Arguments, o.Result = objectOf(o.Arguments), orNull(o.Result)
	if err := p.sanitize(o); err != nil {
		return Decoded{}, err
	}
	o.Timestamp = o.Timestamp.UTC()
	if o.ID == "" {
		o.ID = memory.NewID(o.Timestamp)
	}
	if o.MemoryType == "" {
		o.MemoryType, _ = classify.Classify(o.ToolName)
	}
	if o.Summary = classify.OneLine(o.Summary); o.Summary == "" {
		o.Summary = classify.Summarize(o.ToolName, o.Arguments)
	}
	return Decoded{Entries: []memory.Entry{{Observation: o}}}, nil
}

// objectOf returns arguments as a JSON object: absent or null is {}, and any other
// value is kept whole under "value" rather than refused or lost. The sanitizer
// compacts and checks what it returns.
func objectOf(raw json.RawMessage) json.RawMessage {
	raw = orNull(raw)
	switch {
	case raw == nil:
		return json.RawMessage("{}")
	case raw[0] != '{':
		return append(append(json.RawMessage(`{"value":`), raw...), '}')
	}
	return raw
}

// orNull is raw without surrounding space, or nil for no value or JSON null.
func orNull(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

// sourceName keeps an adapter's name to a short token: it is shown in tables and
// trailers, and input can name any source.
func sourceName(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._-", r)) {
			return r
		}
		return '_'
	}, s)
	if len(s) > 64 {
		s = s[:64]
	}
	return s
}

// decodeEvent reads a session event as `agmem replay --json --events` writes it.
func decodeEvent(data []byte, p Policy, now time.Time) (Decoded, error) {
	var raw struct {
		memory.Event
		Timestamp string `json:"timestamp"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return Decoded{}, fmt.Errorf("session event: %w", err)
	}
	e := raw.Event
	if raw.Timestamp != "" {
		t, err := parseTime(raw.Timestamp)
		if err != nil {
			return Decoded{}, err
		}
		e.Timestamp = t
	}
	return FromEvent(e, p, now)
}

// FromEvent checks a session event and completes it: an event with no time happened
// now, and one with no id gets one.
func FromEvent(e memory.Event, p Policy, now time.Time) (Decoded, error) {
	e.Source = sourceName(e.Source)
	if e.Name == "" {
		return Decoded{}, errors.New(`session event: "event" is empty`)
	}
	if err := checkSession(e.SessionID); err != nil {
		return Decoded{}, err
	}
	d := Decoded{GivenID: e.ID != "", Dated: !e.Timestamp.IsZero()}
	if e.Timestamp.IsZero() {
		e.Timestamp = now
	}
	e.Timestamp = e.Timestamp.UTC()
	if e.ID == "" {
		e.ID = memory.NewID(e.Timestamp)
	} else {
		id, err := memory.NormalizeID(e.ID)
		if err != nil {
			return Decoded{}, err
		}
		e.ID = id
	}
	p.sanitizeEvent(&e)
	d.Entries = []memory.Entry{{Event: &e}}
	return d, nil
}

// newEvent makes a session event of a hook payload, keeping the attributes that are set.
func newEvent(name, session, source, text string, at time.Time, attrs map[string]string) *memory.Event {
	e := &memory.Event{ID: memory.NewID(at), SessionID: session, Timestamp: at.UTC(), Name: name,
		Text: text, Source: source}
	for k, v := range attrs {
		if v == "" {
			continue
		}
		if e.Attrs == nil {
			e.Attrs = map[string]string{}
		}
		e.Attrs[k] = v
	}
	return e
}

// checkSession refuses a session id given in input that the journal would refuse, so that
// the line that holds it is refused alone instead of the whole transaction it is part of.
// No session id is fine: the journal assigns one.
func checkSession(id string) error {
	if id == "" {
		return nil
	}
	return memory.CheckSessionID(id)
}

// lastTime is the last instant the journal orders correctly (nanoseconds since 1970
// in a signed 64-bit number).
var lastTime = time.Unix(0, math.MaxInt64)

// parseTime reads RFC 3339, and the Python agmem's isoformat() without a zone as UTC.
// Times before 1970 are refused (ids are ULIDs, which count milliseconds from then), and
// so are times after lastTime.
func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		if t, err = time.Parse("2006-01-02T15:04:05.999999999", s); err != nil {
			return time.Time{}, fmt.Errorf("timestamp %q is not RFC 3339", validPrefix(s, 40))
		}
	}
	if t.Before(time.Unix(0, 0)) {
		return time.Time{}, fmt.Errorf("timestamp %q is before 1970", validPrefix(s, 40))
	}
	if t.After(lastTime) {
		return time.Time{}, fmt.Errorf("timestamp %q is after %d", validPrefix(s, 40), lastTime.Year())
	}
	return t.UTC(), nil
}
