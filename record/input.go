package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agmem/agmem/capture"
	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/journal"
	"github.com/agmem/agmem/memory"
)

// Input is what a Go program records: an Observation or an Event.
type Input interface {
	decode(r *Recorder, now time.Time) (capture.Decoded, error)
}

// Observation is one tool call an agent made.
type Observation struct {
	// ID is the observation's id: a ULID or a UUID. "" gives it one by the id rule
	// (FORMAT.md §Identity).
	ID string
	// Session is the session it belongs to; "" is the Recorder's (see Options.Session).
	Session string
	// Time is when the call was made; zero is now.
	Time time.Time
	Tool string
	// Arguments are the call's arguments, kept as a JSON object: a json.RawMessage as
	// it is, anything else as encoding/json writes it; a value that is not an object is
	// kept under "value". nil is {}.
	Arguments any
	// Result is what the call returned: a string, or any value encoding/json takes.
	// nil is none.
	Result any
	// Error says the call failed, and how.
	Error     string
	ToolUseID string
	Cwd       string // the directory the agent worked in
	AgentID   string // a subagent's id
	Duration  time.Duration
	// MemoryType is episodic, semantic or procedural; "" classifies by the tool's name.
	MemoryType string
	// Summary is one line of what the call did; "" makes one from the tool and its
	// arguments.
	Summary string
	// Source names what captured the call; "" is "go".
	Source string
}

// Event is a moment of a session that is not a tool call: SessionStart,
// UserPromptSubmit, Stop, SubagentStop, SessionEnd, or a name of the program's own.
type Event struct {
	ID      string // "" gives it one by the id rule
	Session string // "" is the Recorder's
	Time    time.Time
	Name    string
	Text    string // the prompt, the last message, the end reason
	// Attrs are what else is known of it: "cwd", "model", "start_source", …
	Attrs  map[string]string
	Source string // "" is "go"
}

// SourceGo is the source of what a Go program records.
const SourceGo = "go"

func (o Observation) decode(r *Recorder, now time.Time) (capture.Decoded, error) {
	n, err := o.native()
	if err != nil {
		return capture.Decoded{}, err
	}
	// What an agent's hook could not give agmem either.
	if size := len(n.Arguments) + len(n.Result) + len(n.Error); size > r.maxInput {
		return capture.Decoded{}, hint.With(fmt.Errorf("the call is larger than %s; nothing was recorded", sizeName(r.maxInput)),
			"capture.max_input_bytes raises the bound; a large value is cut to capture.max_value_bytes once read")
	}
	return capture.FromNative(n, r.policy, now)
}

// native is the observation in capture's native shape.
func (o Observation) native() (capture.Native, error) {
	n := capture.Native{ID: o.ID, SessionID: o.Session, ToolName: &o.Tool, MemoryType: o.MemoryType,
		Summary: o.Summary, Source: o.Source, ToolUseID: o.ToolUseID, Cwd: o.Cwd, AgentID: o.AgentID, Error: o.Error}
	if n.Source == "" {
		n.Source = SourceGo
	}
	if o.MemoryType != "" {
		if _, ok := memory.ParseType(o.MemoryType); !ok {
			return n, fmt.Errorf("memory type %q is none of episodic, semantic, procedural", o.MemoryType)
		}
	}
	if !o.Time.IsZero() {
		n.Timestamp = o.Time.UTC().Format(time.RFC3339Nano)
	}
	if o.Duration > 0 {
		ms := float64(o.Duration.Milliseconds())
		n.DurationMS = &ms
	}
	var err error
	if o.Arguments != nil {
		if n.Arguments, err = asJSON(o.Arguments); err != nil {
			return n, fmt.Errorf("arguments: %w", err)
		}
	}
	if o.Result != nil {
		if n.Result, err = asJSON(o.Result); err != nil {
			return n, fmt.Errorf("result: %w", err)
		}
	}
	return n, nil
}

// asJSON is v as JSON: a json.RawMessage as it is, once it is checked.
func asJSON(v any) (json.RawMessage, error) {
	if raw, ok := v.(json.RawMessage); ok {
		if !json.Valid(raw) {
			return nil, errors.New("not valid JSON")
		}
		return raw, nil
	}
	return json.Marshal(v)
}

func (e Event) decode(r *Recorder, now time.Time) (capture.Decoded, error) {
	source := e.Source
	if source == "" {
		source = SourceGo
	}
	return capture.FromEvent(memory.Event{ID: e.ID, SessionID: e.Session, Timestamp: e.Time, Name: e.Name,
		Text: e.Text, Attrs: e.Attrs, Source: source}, r.policy, now)
}

// Record records inputs in one journal transaction: when it returns without an error,
// each is durable, or said in the Outcome to be left out (by a capture rule, an opt-out)
// or refused (for what it holds: the error says which input and why). Inputs are
// checked, redacted and bounded as every other input is.
func (r *Recorder) Record(inputs ...Input) (Outcome, error) {
	var out Outcome
	if r.off != "" {
		out.NotCaptured = []string{r.off}
		return out, nil
	}
	now := time.Now()
	var entries []admitted
	for i, in := range inputs {
		d, err := in.decode(r, now)
		if err == nil {
			var kept []admitted
			if kept, err = r.admit(d, nil, &out); err == nil {
				entries = append(entries, kept...)
				continue
			}
		}
		if len(inputs) > 1 {
			err = fmt.Errorf("input %d: %w", i+1, err)
		}
		r.refuse(&out, err)
	}
	return out, r.write(entries, journal.AppendOptions{Now: now}, &out)
}
