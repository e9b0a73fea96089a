package capture

import (
	"encoding/json"
	"fmt"
	"time"

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
	return Decoded{Skipped: []string{fmt.Sprintf("%s hook event %q is not recorded", source, h.HookEvent)}}, nil
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
