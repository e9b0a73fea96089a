package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// claudeEvents are the hook events Claude Code 2.1.332 has, which the raw hook gets; all
// but WorktreeCreate and WorktreeRemove, whose hooks would replace git's worktree commands.
var claudeEvents = []string{"PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch",
	"Notification", "UserPromptSubmit", "UserPromptExpansion", "SessionStart", "SessionEnd", "Stop",
	"StopFailure", "SubagentStart", "SubagentStop", "PreCompact", "PostCompact", "PreModelSwitch",
	"PostModelSwitch", "PermissionRequest", "PermissionDenied", "Setup", "TeammateIdle", "TaskCreated",
	"TaskCompleted", "Elicitation", "ElicitationResult", "ConfigChange", "InstructionsLoaded",
	"CwdChanged", "FileChanged", "DirectoryAdded", "MessageDisplay", "PreSkillShellCommand"}

// TestClaudeCode runs Claude Code headless (claude -p) through the script, with agmem's
// hooks and memory MCP server installed and the MCP filesystem server behind agmem's proxy.
func TestClaudeCode(t *testing.T) {
	claude := agentBinary(t, "claude")
	if !isolate(t) {
		return
	}
	w := newWorld(t)
	script := []step{
		{what: "list the files", tool: "Bash", args: map[string]any{"command": "ls -la " + w.project, "description": "List the files"}},
		{what: "read a file", tool: "Read", args: map[string]any{"file_path": filepath.Join(w.project, "notes.txt")}},
		{what: "write a file", tool: "Write", args: map[string]any{"file_path": filepath.Join(w.project, "out.txt"),
			"content": "written by the scripted model through Claude Code's Write tool\n"}},
		{what: "a shell command that fails", tool: "Bash", args: map[string]any{"command": "cat " + filepath.Join(w.project, "does-not-exist.txt"), "description": "A command that fails"}},
		{what: "a tool call that fails", tool: "Read", args: map[string]any{"file_path": filepath.Join(w.project, "missing.txt")}},
		{what: "a refused call: a Write to a file not read first", tool: "Write", args: map[string]any{"file_path": filepath.Join(w.project, "file-1.txt"),
			"content": "overwritten without reading it first\n"}},
		{what: "an MCP call through agmem mcp proxy", server: "filesystem", tool: "read_text_file", args: map[string]any{"path": filepath.Join(w.project, "file-2.txt")}},
		{what: "agmem's memory search", server: "agmem", tool: "search", args: map[string]any{"query": seedMarker}},
		{what: "the final answer", answer: finalAnswer},
	}
	model := startModel(t, filepath.Join(w.dir, "requests"), script, anthropicMessages)

	w.agmemOK("hooks", "install", "claude")
	w.agmemOK("mcp", "install", "claude")
	// The raw hook comes in a settings file of its own, which Claude Code merges with the
	// user's settings agmem wrote.
	raw := map[string]any{}
	w.addRawHooks(raw, claudeEvents, func(event, command string) map[string]any {
		return map[string]any{"hooks": []any{map[string]any{"type": "command", "command": command, "timeout": 10}}}
	})
	w.writeJSON(filepath.Join(w.dir, "raw-hooks.json"), raw)
	command, args := w.mcpProxy()
	w.writeJSON(filepath.Join(w.dir, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"filesystem": map[string]any{"type": "stdio", "command": command, "args": args}}})

	stdout, _ := w.runAgent(claude, []string{"-p", "AGMEM-E2E: work through the script.",
		"--output-format", "json", "--model", "claude-sonnet-4-5",
		"--settings", filepath.Join(w.dir, "raw-hooks.json"),
		"--mcp-config", filepath.Join(w.dir, "mcp.json"),
		"--allowedTools", "Bash", "Read", "Write", "mcp__filesystem__read_text_file", "mcp__agmem__search"},
		"ANTHROPIC_BASE_URL="+model.url(),
		"ANTHROPIC_API_KEY=sk-ant-e2e-scripted",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		// MCP tools offered to the model directly, not behind ToolSearch.
		"ENABLE_TOOL_SEARCH=false")

	calls, events := claudeOracle(w.payloads())
	w.checkRun(model, "claude-code", stdout, calls, events)
}

// claudeOracle reads what Claude Code reported: each call of PostToolUse and
// PostToolUseFailure, and each call only a PostToolBatch reports (one refused before it
// ran, whose result is Claude Code's <tool_use_error>); and the session events.
func claudeOracle(payloads []payload) (calls []wantCall, events []wantEvent) {
	reported := map[string]bool{}
	for _, p := range payloads {
		switch p.event {
		case "PostToolUse", "PostToolUseFailure":
			c := wantCall{from: p.file, tool: p.str("tool_name"), args: p.fields["tool_input"], result: p.fields["tool_response"],
				session: p.str("session_id"), toolUseID: p.str("tool_use_id"), cwd: p.str("cwd"), duration: durationOf(p)}
			if p.event == "PostToolUseFailure" {
				c.failed, c.errorIs, c.result = true, p.str("error"), nil
			}
			reported[c.toolUseID] = true
			calls = append(calls, c)
		case "SessionStart":
			events = append(events, wantEvent{from: p.file, name: p.event, session: p.str("session_id")})
		case "UserPromptSubmit":
			events = append(events, wantEvent{from: p.file, name: p.event, text: p.str("prompt"), session: p.str("session_id")})
		case "Stop", "SubagentStop":
			events = append(events, wantEvent{from: p.file, name: p.event, text: p.str("last_assistant_message"), session: p.str("session_id")})
		case "SessionEnd":
			events = append(events, wantEvent{from: p.file, name: p.event, text: p.str("reason"), session: p.str("session_id")})
		}
	}
	for _, p := range payloads {
		if p.event != "PostToolBatch" {
			continue
		}
		var batch []struct {
			ToolName     string          `json:"tool_name"`
			ToolInput    json.RawMessage `json:"tool_input"`
			ToolUseID    string          `json:"tool_use_id"`
			ToolResponse json.RawMessage `json:"tool_response"`
		}
		_ = json.Unmarshal(p.fields["tool_calls"], &batch)
		for _, b := range batch {
			if reported[b.ToolUseID] {
				continue
			}
			reported[b.ToolUseID] = true
			c := wantCall{from: p.file + " (only there)", tool: b.ToolName, args: b.ToolInput, result: b.ToolResponse,
				session: p.str("session_id"), toolUseID: b.ToolUseID, cwd: p.str("cwd")}
			var text string
			_ = json.Unmarshal(b.ToolResponse, &text)
			if m := toolUseError.FindStringSubmatch(text); m != nil {
				c.failed, c.errorHas, c.result = true, m[1], nil
			}
			calls = append(calls, c)
		}
	}
	return calls, events
}

// toolUseError is how Claude Code tells the model it refused a call.
var toolUseError = regexp.MustCompile(`(?s)<tool_use_error>(.*)</tool_use_error>`)

func durationOf(p payload) *int64 {
	var ms float64
	if json.Unmarshal(p.fields["duration_ms"], &ms) != nil {
		return nil
	}
	n := int64(ms)
	return &n
}

// anthropicMessages speaks the Anthropic Messages API as Claude Code uses it: POST
// /v1/messages, streamed as server-sent events, one request per turn.
func anthropicMessages(m *scriptedModel, w http.ResponseWriter, r *http.Request, body []byte) {
	switch {
	case strings.HasPrefix(r.URL.Path, "/v1/messages/count_tokens"):
		writeJSON(w, map[string]any{"input_tokens": 100})
		return
	case r.URL.Path != "/v1/messages":
		http.NotFound(w, r)
		return
	}
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
		Tools  []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var tr turn
	for _, t := range req.Tools {
		tr.tools = append(tr.tools, t.Name)
	}
	for _, msg := range req.Messages {
		var blocks []struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(msg.Content, &blocks) == nil {
			for _, b := range blocks {
				if b.Type == "tool_result" {
					tr.results++
				}
			}
		}
	}
	block, stop := map[string]any{"type": "text", "text": "ok"}, "end_turn"
	if len(tr.tools) > 0 {
		s, name := m.next(tr)
		if name == "" {
			block = map[string]any{"type": "text", "text": s.answer}
		} else {
			block, stop = map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_e2e_%d", tr.results+1), "name": name, "input": s.args}, "tool_use"
		}
	}
	message := map[string]any{"id": fmt.Sprintf("msg_e2e_%d", tr.results+1), "type": "message", "role": "assistant",
		"model": req.Model, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 100, "output_tokens": 10}}
	if !req.Stream {
		message["content"], message["stop_reason"] = []any{block}, stop
		writeJSON(w, message)
		return
	}
	message["content"], message["stop_reason"] = []any{}, nil
	events := newSSE(w)
	events.send("message_start", map[string]any{"type": "message_start", "message": message})
	switch block["type"] {
	case "text":
		events.send("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		events.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": block["text"]}})
	case "tool_use":
		events.send("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": block["id"], "name": block["name"], "input": map[string]any{}}})
		events.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": mustJSON(block["input"])}})
	}
	events.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	events.send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 10}})
	events.send("message_stop", map[string]any{"type": "message_stop"})
}
