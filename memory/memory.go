package memory

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/agmem/agmem/internal/jsonscan"
)

// Type is the kind of memory an observation is.
type Type string

const (
	Episodic   Type = "episodic"   // something that happened: a command ran, a file changed
	Semantic   Type = "semantic"   // something learned: a file read, a search, a fetched page
	Procedural Type = "procedural" // how something is done: plans, workflows, set-ups
)

// ParseType accepts the three type names exactly as they are spelled in JSON.
func ParseType(s string) (Type, bool) {
	switch t := Type(s); t {
	case Episodic, Semantic, Procedural:
		return t, true
	}
	return "", false
}

// Observation is one captured tool call, in the native shape (FORMAT.md §Observations): the shape that
// `agmem record` reads and `agmem replay --json` writes.
type Observation struct {
	ID         string          `json:"id"`
	SessionID  string          `json:"session_id"`
	Timestamp  time.Time       `json:"timestamp"`
	ToolName   string          `json:"tool_name"`
	Arguments  json.RawMessage `json:"arguments"`
	Result     json.RawMessage `json:"result,omitempty"`
	MemoryType Type            `json:"memory_type"`
	Summary    string          `json:"summary"`
	Source     string          `json:"source,omitempty"`
	ToolUseID  string          `json:"tool_use_id,omitempty"`
	Cwd        string          `json:"cwd,omitempty"`
	AgentID    string          `json:"agent_id,omitempty"`
	// PromptID ties the call to the prompt that caused it (Claude Code's prompt_id).
	PromptID   string `json:"prompt_id,omitempty"`
	DurationMS *int64 `json:"duration_ms,omitempty"`
	Error      string `json:"error,omitempty"`
	// Interrupted says the call failed because a person interrupted it.
	Interrupted bool `json:"interrupted,omitempty"`
	// NoResult says the agent reported the call before it ran (Codex's PreToolUse) and no
	// result since: the call's own report, when it comes, takes its place in the journal.
	// Committed so, it is a failed call whose error says no result came.
	NoResult bool `json:"no_result,omitempty"`

	// Redactions counts the secrets replaced by "[REDACTED:<rule>]" before the
	// observation was first written.
	Redactions int `json:"redactions,omitempty"`
	// Truncated gives the original size in bytes of each value cut to the capture
	// limit, by where it was: "result", "arguments.content", "error".
	Truncated map[string]int `json:"truncated,omitempty"`
	// Withheld is the path glob that kept the file's contents out of the observation.
	Withheld string `json:"withheld,omitempty"`
}

// ResultText is the result as a person reads it: a JSON string unquoted, any other JSON
// value in its compact encoding, and "" when there is no result.
func (o *Observation) ResultText() string {
	return JSONText(o.Result)
}

// JSONText unquotes a JSON string and returns any other JSON value as it is. A string
// is unquoted as encoding/json unquotes it, by jsonscan: encoding/json's two passes
// over a result were a tenth of the search index's reading.
func JSONText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		s := jsonscan.New(raw)
		if text, err := s.Unquote(); err == nil && s.End() {
			return text
		}
	}
	return string(raw)
}

// Event is a moment in a session that is not a tool call: SessionStart, UserPromptSubmit,
// Stop, SubagentStop, SessionEnd. It is kept with its session so that replay can show
// where a session began, what was asked and how it ended.
type Event struct {
	ID        string            `json:"id"`
	SessionID string            `json:"session_id"`
	Timestamp time.Time         `json:"timestamp"`
	Name      string            `json:"event"`
	Text      string            `json:"text,omitempty"`  // the prompt, the last message, the end reason
	Attrs     map[string]string `json:"attrs,omitempty"` // model, start source, agent id, cwd …
	Source    string            `json:"source,omitempty"`
	// Redactions counts the secrets replaced in Text and Attrs.
	Redactions int `json:"redactions,omitempty"`
}

// ContextGiven is the event that keeps what agmem told an agent when its session
// started (its Text), and the ids of the entries it cited (Attrs "cited").
const ContextGiven = "ContextGiven"

// Entry is one line of a session's history: an observation or an event, never both.
// It is the unit the journal stores and the sessions/ record in git holds.
type Entry struct {
	Observation *Observation `json:"observation,omitempty"`
	Event       *Event       `json:"event,omitempty"`
}

// ID names the entry, whichever kind it is.
func (e Entry) ID() string {
	if e.Observation != nil {
		return e.Observation.ID
	}
	return e.Event.ID
}

// Time is when the entry happened.
func (e Entry) Time() time.Time {
	if e.Observation != nil {
		return e.Observation.Timestamp
	}
	return e.Event.Timestamp
}

// Session is the id of the session the entry belongs to.
func (e Entry) Session() string {
	if e.Observation != nil {
		return e.Observation.SessionID
	}
	return e.Event.SessionID
}

// Validate checks what every later step relies on, so that nothing downstream has to.
func (e Entry) Validate() error {
	if (e.Observation == nil) == (e.Event == nil) {
		return fmt.Errorf("entry must hold exactly one of observation or event")
	}
	if err := CheckSessionID(e.Session()); err != nil {
		return err
	}
	if e.Observation != nil && e.Observation.ToolName == "" {
		return fmt.Errorf("tool_name is empty")
	}
	return nil
}

// SetSession puts the entry in session id.
func (e Entry) SetSession(id string) {
	if e.Observation != nil {
		e.Observation.SessionID = id
	} else {
		e.Event.SessionID = id
	}
}

// SetID gives the entry id.
func (e Entry) SetID(id string) {
	if e.Observation != nil {
		e.Observation.ID = id
	} else {
		e.Event.ID = id
	}
}

// Source is the adapter that captured the entry, if known.
func (e Entry) Source() string {
	if e.Observation != nil {
		return e.Observation.Source
	}
	return e.Event.Source
}
