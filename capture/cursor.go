package capture

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agmem/agmem/memory"
)

// cursorHook holds the fields of Cursor's hook payloads that agmem reads (NOTES.md
// §Hooks): every event carries conversation_id (agmem's session), generation_id, model,
// hook_event_name and workspace_roots.
type cursorHook struct {
	HookEvent      string          `json:"hook_event_name"`
	ConversationID string          `json:"conversation_id"`
	GenerationID   string          `json:"generation_id"`
	Model          string          `json:"model"`
	WorkspaceRoots []string        `json:"workspace_roots"`
	Command        string          `json:"command"` // afterShellExecution
	Output         json.RawMessage `json:"output"`
	Duration       *float64        `json:"duration"`
	ToolName       string          `json:"tool_name"`  // afterMCPExecution, postToolUse
	ToolInput      json.RawMessage `json:"tool_input"` // a JSON string in afterMCPExecution
	ResultJSON     json.RawMessage `json:"result_json"`
	ToolOutput     json.RawMessage `json:"tool_output"` // postToolUse
	ToolUseID      string          `json:"tool_use_id"`
	FilePath       string          `json:"file_path"` // afterFileEdit
	Edits          json.RawMessage `json:"edits"`
	Prompt         string          `json:"prompt"` // beforeSubmitPrompt
	Status         string          `json:"status"` // stop
}

func decodeCursorHook(data []byte, p Policy, now time.Time) (Decoded, error) {
	var h cursorHook
	if err := json.Unmarshal(data, &h); err != nil {
		return Decoded{}, fmt.Errorf("cursor hook payload: %w", err)
	}
	if err := checkSession(h.ConversationID); err != nil {
		return Decoded{}, err
	}
	n := Native{SessionID: h.ConversationID, Source: SourceCursor, Cwd: h.cwd(), DurationMS: h.Duration, ToolUseID: h.ToolUseID}
	switch h.HookEvent {
	case "afterShellExecution":
		n.ToolName, n.Result = ptr("Shell"), h.Output
		n.Arguments, _ = json.Marshal(map[string]string{"command": h.Command})
	case "afterMCPExecution":
		n.ToolName, n.Arguments, n.Result = &h.ToolName, unquoteJSON(h.ToolInput), unquoteJSON(h.ResultJSON)
	case "afterFileEdit":
		n.ToolName = ptr("Edit")
		n.Arguments, _ = json.Marshal(map[string]json.RawMessage{"file_path": mustJSON(h.FilePath), "edits": h.Edits})
	case "postToolUse":
		if reportedElsewhere(h.ToolName) {
			return Decoded{Skipped: []string{fmt.Sprintf("cursor postToolUse of %q: its own after… event records it", h.ToolName)}}, nil
		}
		n.ToolName, n.Arguments, n.Result = &h.ToolName, unquoteJSON(h.ToolInput), h.ToolOutput
	case "beforeSubmitPrompt", "stop":
		name, text := "UserPromptSubmit", h.Prompt
		if h.HookEvent == "stop" {
			name, text = "Stop", h.Status
		}
		e := newEvent(name, h.ConversationID, SourceCursor, text, now, map[string]string{
			"model": h.Model, "cwd": h.cwd(), "generation_id": h.GenerationID, "agent_event": h.HookEvent})
		p.sanitizeEvent(e)
		return Decoded{Entries: []memory.Entry{{Event: e}}}, nil
	default:
		return Decoded{Skipped: []string{fmt.Sprintf("cursor hook event %q is not recorded", h.HookEvent)}}, nil
	}
	return FromNative(n, p, now)
}

// reportedElsewhere says whether Cursor reports a tool's calls by an event of their own
// too (afterShellExecution, afterMCPExecution, afterFileEdit), which carries no
// tool_use_id to know a call by: postToolUse of it would record the call twice.
func reportedElsewhere(tool string) bool {
	switch strings.ToLower(tool) {
	case "shell", "terminal", "run_terminal_cmd", "edit", "write", "multiedit", "edit_file",
		"search_replace", "delete_file", "strreplace":
		return true
	}
	lower := strings.ToLower(tool)
	return strings.HasPrefix(lower, "mcp:") || strings.HasPrefix(lower, "mcp_")
}

func (h *cursorHook) cwd() string {
	if len(h.WorkspaceRoots) > 0 {
		return h.WorkspaceRoots[0]
	}
	return ""
}

// unquoteJSON reads a value Cursor sends as a string holding JSON ("{\"path\":…}") as
// the JSON it holds; any other value, or a string that holds no JSON, stays as it is.
func unquoteJSON(raw json.RawMessage) json.RawMessage {
	var s string
	if json.Unmarshal(raw, &s) == nil && json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	return raw
}

func mustJSON(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

func ptr[T any](v T) *T { return &v }
