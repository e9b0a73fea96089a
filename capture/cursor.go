package capture

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agmem/agmem/internal/jsonscan"
	"github.com/agmem/agmem/memory"
)

// cursorHook holds the fields of Cursor's hook payloads that agmem reads (FORMAT.md
// §Input): every event carries conversation_id (agmem's session), generation_id, model,
// hook_event_name and workspace_roots.
type cursorHook struct {
	HookEvent      string
	ConversationID string
	GenerationID   string
	Model          string
	WorkspaceRoots []string
	Command        string // afterShellExecution
	Output         json.RawMessage
	Duration       *float64
	ToolName       string          // afterMCPExecution, postToolUse
	ToolInput      json.RawMessage // a JSON string in afterMCPExecution
	ResultJSON     json.RawMessage
	ToolOutput     json.RawMessage // postToolUse
	ToolUseID      string
	FilePath       string // afterFileEdit
	Edits          json.RawMessage
	Prompt         string // beforeSubmitPrompt
	Status         string // stop
}

func decodeCursorHook(o *object, event string, p Policy, now time.Time) (Decoded, error) {
	h := cursorHook{HookEvent: event, Output: o.value(mOutput), ToolInput: o.value(mToolInput),
		ResultJSON: o.value(mResultJSON), ToolOutput: o.value(mToolOutput), Edits: o.value(mEdits)}
	err := o.strs(field{mConversationID, &h.ConversationID}, field{mGenerationID, &h.GenerationID},
		field{mModel, &h.Model}, field{mCommand, &h.Command}, field{mToolName, &h.ToolName},
		field{mToolUseID, &h.ToolUseID}, field{mFilePath, &h.FilePath}, field{mPrompt, &h.Prompt},
		field{mStatus, &h.Status})
	if err == nil {
		h.WorkspaceRoots, err = o.strings(mWorkspaceRoots)
	}
	if err == nil {
		h.Duration, err = o.num(mDuration)
	}
	if err != nil {
		return Decoded{}, fmt.Errorf("cursor hook payload: %w", err)
	}
	if err := checkSession(h.ConversationID); err != nil {
		return Decoded{}, err
	}
	n := Native{SessionID: h.ConversationID, Source: SourceCursor, Cwd: h.cwd(), DurationMS: h.Duration, ToolUseID: h.ToolUseID}
	switch h.HookEvent {
	case "afterShellExecution":
		n.ToolName, n.Result = ptr("Shell"), h.Output
		n.Arguments = jsonObject(jsonMember{"command", jsonscan.AppendString(nil, h.Command, true)})
	case "afterMCPExecution":
		n.ToolName, n.Arguments, n.Result = &h.ToolName, unquoteJSON(h.ToolInput), unquoteJSON(h.ResultJSON)
	case "afterFileEdit":
		n.ToolName = ptr("Edit")
		n.Arguments = jsonObject(jsonMember{"edits", orNullText(h.Edits)},
			jsonMember{"file_path", jsonscan.AppendString(nil, h.FilePath, true)})
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
	if len(raw) == 0 || raw[0] != '"' {
		return raw
	}
	r := jsonscan.New(raw)
	if s, err := r.Unquote(); err == nil && json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	return raw
}

// jsonMember is a member of an object jsonObject writes: a name and JSON text.
type jsonMember struct {
	name  string
	value []byte
}

// jsonObject writes an object of members, in their order.
func jsonObject(members ...jsonMember) json.RawMessage {
	b := []byte{'{'}
	for i, m := range members {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonscan.AppendString(b, m.name, true)
		b = append(append(b, ':'), m.value...)
	}
	return append(b, '}')
}

// orNullText is a value's JSON text, null for none.
func orNullText(raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return []byte("null")
	}
	return raw
}

func ptr[T any](v T) *T { return &v }
