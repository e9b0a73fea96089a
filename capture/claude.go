package capture

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/agmem/agmem/internal/jsonscan"
	"github.com/agmem/agmem/memory"
)

// claudeHook holds the fields of every Claude Code hook event that agmem reads
// (NOTES.md §Hooks).
type claudeHook struct {
	HookEvent string `json:"hook_event_name"`
	SessionID string `json:"session_id"`
	Cwd       string `json:"cwd"`
	AgentID   string `json:"agent_id"`
	AgentType string `json:"agent_type"`
	claudeCall
	ToolCalls []claudeCall `json:"tool_calls"` // PostToolBatch

	Source         string `json:"source"` // SessionStart: startup|resume|clear|compact|fork
	Model          string `json:"model"`
	Reason         string `json:"reason"` // SessionEnd
	Prompt         string `json:"prompt"` // UserPromptSubmit
	LastMessage    string `json:"last_assistant_message"`
	TranscriptPath string `json:"transcript_path"`
	PermissionMode string `json:"permission_mode"`
	TurnID         string `json:"turn_id"` // Codex

	source string // the agent: Claude Code, or Codex, which sends the same shapes
}

type claudeCall struct {
	ToolName     string          `json:"tool_name"`
	ToolInput    json.RawMessage `json:"tool_input"`
	ToolResponse json.RawMessage `json:"tool_response"`
	ToolUseID    string          `json:"tool_use_id"`
	Error        *string         `json:"error"`
	DurationMS   *float64        `json:"duration_ms"`
}

// decodeClaudeHook reads a Claude Code hook payload, or a Codex one (source says
// which): Codex sends Claude Code's events with Claude Code's fields, plus turn_id.
func decodeClaudeHook(data []byte, p Policy, now time.Time, source string) (Decoded, error) {
	h := claudeHook{source: source}
	if err := json.Unmarshal(data, &h); err != nil {
		return Decoded{}, fmt.Errorf("%s hook payload: %w", source, err)
	}
	return h.decode(p, now)
}

// readClaudeHook reads a Claude Code or Codex hook payload as Decode's probe and
// json.Unmarshal would, in one pass and without encoding/json, whose reflection over
// claudeHook cost a hook's process about a tenth of a millisecond to set up: it is
// what every tool call's hook reads. It says false for any other payload, for one
// that encoding/json would refuse, and for one that holds what this reads no faster (a
// member name not in ASCII, a member of another type than claudeHook's, a batch of
// calls): decodeClaudeHook then gives the same result, or its error.
func readClaudeHook(data []byte) (h claudeHook, ok bool) {
	hasEvent, hasTurn := false, false
	ok = readMembers(data, func(r *jsonscan.Scanner, name string) bool {
		var err error
		typed := true // the member is of the type claudeHook's member is
		switch name {
		case "hook_event_name":
			hasEvent = r.Peek() == '"' // null is no event: Decode's probe takes it for none
			typed = optString(r, &h.HookEvent) && hasEvent
		case "turn_id":
			hasTurn = true
			typed = optString(r, &h.TurnID)
		case "tool_input":
			h.ToolInput, err = r.Skip(1)
		case "tool_response":
			h.ToolResponse, err = r.Skip(1)
		case "error":
			h.Error, typed = nil, null(r)
			if !typed && r.Peek() == '"' {
				var s string
				s, err = r.Unquote()
				h.Error, typed = &s, true
			}
		case "duration_ms":
			h.DurationMS, typed = float(r)
		case "tool_calls", "conversation_id", "workspace_roots", "timestamp":
			return false // a batch, or another agent's payload
		default:
			if f := h.field(name); f != nil {
				typed = optString(r, f)
			} else {
				_, err = r.Skip(1)
			}
		}
		return err == nil && typed
	})
	if !ok || !hasEvent || isGeminiHook(h.HookEvent, false) {
		return h, false
	}
	h.source = SourceClaudeCode
	if hasTurn {
		h.source = SourceCodex
	}
	return h, true
}

// field is the string member of h that a lower-case member name names, or nil.
func (h *claudeHook) field(name string) *string {
	switch name {
	case "session_id":
		return &h.SessionID
	case "cwd":
		return &h.Cwd
	case "agent_id":
		return &h.AgentID
	case "agent_type":
		return &h.AgentType
	case "tool_name":
		return &h.ToolName
	case "tool_use_id":
		return &h.ToolUseID
	case "source":
		return &h.Source
	case "model":
		return &h.Model
	case "reason":
		return &h.Reason
	case "prompt":
		return &h.Prompt
	case "last_assistant_message":
		return &h.LastMessage
	case "transcript_path":
		return &h.TranscriptPath
	case "permission_mode":
		return &h.PermissionMode
	}
	return nil
}

// decode turns the payload into what agmem records of it.
func (h *claudeHook) decode(p Policy, now time.Time) (Decoded, error) {
	switch h.HookEvent {
	case "PostToolUse", "PostToolUseFailure":
		return h.observations([]claudeCall{h.claudeCall}, p, now)
	case "PostToolBatch":
		return h.observations(h.ToolCalls, p, now)
	case "SessionStart", "SessionEnd", "UserPromptSubmit", "Stop", "SubagentStop":
		if err := checkSession(h.SessionID); err != nil {
			return Decoded{}, err
		}
		e := h.event(now)
		p.sanitizeEvent(e)
		return Decoded{Entries: []memory.Entry{{Event: e}}}, nil
	}
	return Decoded{Skipped: []string{fmt.Sprintf("%s hook event %q is not recorded", h.source, h.HookEvent)}}, nil
}

func (h *claudeHook) observations(calls []claudeCall, p Policy, now time.Time) (Decoded, error) {
	var out Decoded
	for i, c := range calls {
		n := Native{
			SessionID:  h.SessionID,
			ToolName:   &c.ToolName,
			Arguments:  c.ToolInput,
			Result:     c.ToolResponse,
			Source:     h.source,
			ToolUseID:  c.ToolUseID,
			Cwd:        h.Cwd,
			AgentID:    h.AgentID,
			DurationMS: c.DurationMS,
		}
		if c.Error != nil {
			n.Error = *c.Error
			n.Result, _ = json.Marshal(*c.Error)
		}
		d, err := FromNative(n, p, now)
		if err != nil {
			if len(calls) > 1 {
				err = fmt.Errorf("tool call %d: %w", i+1, err)
			}
			return Decoded{}, err
		}
		out.Entries = append(out.Entries, d.Entries...)
		out.Skipped = append(out.Skipped, d.Skipped...)
	}
	return out, nil
}

func (h *claudeHook) event(now time.Time) *memory.Event {
	var text string
	switch h.HookEvent {
	case "UserPromptSubmit":
		text = h.Prompt
	case "SessionEnd":
		text = h.Reason
	case "Stop", "SubagentStop":
		text = h.LastMessage
	}
	return newEvent(h.HookEvent, h.SessionID, h.source, text, now, map[string]string{
		"start_source": h.Source, "model": h.Model, "cwd": h.Cwd, "agent_id": h.AgentID,
		"agent_type": h.AgentType, "transcript_path": h.TranscriptPath,
		"permission_mode": h.PermissionMode, "turn_id": h.TurnID,
	})
}
