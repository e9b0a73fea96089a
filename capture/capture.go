package capture

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"

	"github.com/agmem/agmem/classify"
	"github.com/agmem/agmem/internal/hint"
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

// Native is the native observation shape (FORMAT.md §Observations), as read from input.
type Native struct {
	ID          string          `json:"id"`
	SessionID   string          `json:"session_id"`
	Timestamp   string          `json:"timestamp"`
	ToolName    *string         `json:"tool_name"`
	Arguments   json.RawMessage `json:"arguments"`
	Result      json.RawMessage `json:"result"`
	MemoryType  string          `json:"memory_type"`
	Summary     string          `json:"summary"`
	Source      string          `json:"source"`
	ToolUseID   string          `json:"tool_use_id"`
	Cwd         string          `json:"cwd"`
	AgentID     string          `json:"agent_id"`
	PromptID    string          `json:"prompt_id"`
	DurationMS  *float64        `json:"duration_ms"`
	Error       string          `json:"error"`
	Interrupted bool            `json:"interrupted"`
	NoResult    bool            `json:"no_result"`

	// answers says the call's report may be in the journal already (Codex's PreToolUse,
	// which agmem's hooks of Codex record): the rule that leaves out a call with a short
	// result cannot leave out its result, or the report would stand for it as a call
	// that never had one. With no report, the call is kept all the same.
	answers bool
}

// Decode reads one JSON object of any supported shape (FORMAT.md §Input): the object
// is read once (object.go), its shape found from the members it has, and what that
// shape holds read from them.
func Decode(data []byte, p Policy, now time.Time) (Decoded, error) {
	data = bytes.TrimSpace(bytes.TrimPrefix(data, utf8BOM))
	if len(data) == 0 || data[0] != '{' {
		return Decoded{}, errors.New("input is not a JSON object")
	}
	o, err := readObject(data)
	if err != nil {
		return Decoded{}, err
	}
	event, err := o.str(mHookEvent)
	hook := err == nil && o.set(mHookEvent)
	switch {
	case err != nil:
		return Decoded{}, err
	case hook:
		switch hookSource(o, event, p.Agent) {
		case SourceCursor:
			return decodeCursorHook(o, event, p, now)
		case SourceGemini:
			return decodeGeminiHook(o, event, p, now)
		case SourceCodex:
			return decodeClaudeHook(o, event, SourceCodex, p, now)
		}
		return decodeClaudeHook(o, event, SourceClaudeCode, p, now)
	case o.has(mToolName):
		n, err := nativeOf(o)
		if err != nil {
			return Decoded{}, fmt.Errorf("native observation: %w", err)
		}
		if n.Source == "" {
			n.Source = SourceNative
		}
		return FromNative(n, p, now)
	case o.has(mEvent):
		return decodeEvent(o, p, now)
	}
	return Decoded{}, errors.New(`input is neither a native observation (no "tool_name") nor a hook payload (no "hook_event_name")`)
}

// Agents are the agents whose hooks agmem reads, by the names "agmem hooks install"
// knows them by, and the source each one's entries are recorded as.
var Agents = map[string]string{"claude": SourceClaudeCode, "codex": SourceCodex, "gemini": SourceGemini, "cursor": SourceCursor}

// AgentNamed is the agent (of Agents) that name names, by its own name or by its
// source's: claude-code is claude, as --agent takes either wherever it is given.
func AgentNamed(name string) (string, bool) {
	if _, ok := Agents[name]; ok {
		return name, true
	}
	for agent, source := range Agents {
		if source == name {
			return agent, true
		}
	}
	return "", false
}

// SourceNamed is the source that name names: a source as entries are recorded with it,
// or an agent's name (of Agents), claude being claude-code.
func SourceNamed(name string) string {
	if source, ok := Agents[name]; ok {
		return source
	}
	return name
}

// hookSource is the agent a hook payload came from: the one its hook names (agent, as
// "agmem-record --agent" is given it), else the one its members tell. Only the hook can
// say for sure: Codex sends Claude Code's events and members, and its SessionStart and
// SessionEnd lack the turn_id that tells its other events apart; its transcript, a
// rollout file, tells them.
func hookSource(o *object, event, agent string) string {
	if source, ok := Agents[agent]; ok {
		return source
	}
	switch {
	case o.has(mConversationID) || o.has(mWorkspaceRoots):
		return SourceCursor
	case o.has(mTurnID) || (event == "SessionStart" || event == "SessionEnd") && isCodexTranscript(o):
		return SourceCodex
	case isGeminiHook(event, o.has(mTimestamp)):
		return SourceGemini
	}
	return SourceClaudeCode
}

// isCodexTranscript says whether the payload's transcript is one of Codex's session
// files ($CODEX_HOME/sessions/…/rollout-<time>-<session>.jsonl); Claude Code's are named
// by the session alone.
func isCodexTranscript(o *object) bool {
	p, err := o.str(mTranscriptPath)
	return err == nil && strings.HasPrefix(p[strings.LastIndexAny(p, `/\`)+1:], "rollout-")
}

// nativeOf reads the native observation o holds.
func nativeOf(o *object) (Native, error) {
	var n Native
	if o.set(mToolName) {
		tool, err := o.str(mToolName)
		if err != nil {
			return n, err
		}
		n.ToolName = &tool
	}
	err := o.strs(field{mID, &n.ID}, field{mSessionID, &n.SessionID}, field{mTimestamp, &n.Timestamp},
		field{mMemoryType, &n.MemoryType}, field{mSummary, &n.Summary}, field{mSource, &n.Source},
		field{mToolUseID, &n.ToolUseID}, field{mCwd, &n.Cwd}, field{mAgentID, &n.AgentID}, field{mError, &n.Error},
		field{mPromptID, &n.PromptID})
	if err != nil {
		return n, err
	}
	n.Arguments, n.Result = o.value(mArguments), o.value(mResult)
	n.Interrupted, n.NoResult = o.isTrue(mInterrupted), o.isTrue(mNoResult)
	n.DurationMS, err = o.num(mDurationMS)
	return n, err
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
		SessionID:   n.SessionID,
		ToolName:    *n.ToolName,
		Arguments:   n.Arguments,
		Result:      n.Result,
		Summary:     n.Summary,
		Source:      n.Source,
		ToolUseID:   n.ToolUseID,
		Cwd:         n.Cwd,
		AgentID:     n.AgentID,
		Error:       n.Error,
		Timestamp:   now,
		Interrupted: n.Interrupted && n.Error != "",
		NoResult:    n.NoResult && n.Error != "",
	}
	if len(n.PromptID) <= maxToolUseID { // one too long to be an id is left out, not the call
		o.PromptID = n.PromptID
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
	d, err := complete(o, p, n.answers)
	d.GivenID, d.Dated = n.ID != "", n.Timestamp != ""
	return d, err
}

// complete fills what the input left out and applies the capture policy; answers keeps
// a call whatever the length of its result (Native.answers).
func complete(o *memory.Observation, p Policy, answers bool) (Decoded, error) {
	if len(o.ToolName) > maxToolName {
		return Decoded{}, fmt.Errorf("tool_name is longer than %d bytes", maxToolName)
	}
	if len(o.ToolUseID) > maxToolUseID {
		return Decoded{}, fmt.Errorf("tool_use_id is longer than %d bytes", maxToolUseID)
	}
	o.Source = sourceName(o.Source)
	if ok, why := p.Rules.Capture(o.ToolName, o.Result, o.Error != "" || answers); !ok {
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
func decodeEvent(o *object, p Policy, now time.Time) (Decoded, error) {
	var e memory.Event
	var at string
	err := o.strs(field{mID, &e.ID}, field{mSessionID, &e.SessionID}, field{mTimestamp, &at},
		field{mEvent, &e.Name}, field{mText, &e.Text}, field{mSource, &e.Source})
	if err == nil {
		e.Attrs, err = o.stringMap(mAttrs)
	}
	if err != nil {
		return Decoded{}, fmt.Errorf("session event: %w", err)
	}
	if at != "" {
		t, err := parseTime(at)
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
	if err := memory.CheckNewSessionID(id); err != nil {
		return hint.With(err, memory.SessionIDHint)
	}
	return nil
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
