package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// codexEvents are the hook events Codex CLI 0.171.0 has, which the raw hook gets.
var codexEvents = []string{"PreToolUse", "PostToolUse", "PermissionRequest", "SessionStart", "SessionEnd",
	"UserPromptSubmit", "Stop", "SubagentStart", "SubagentStop", "PreCompact", "PostCompact"}

// TestCodex runs Codex CLI headless (codex exec) through the script, with agmem's hooks
// and memory MCP server installed and the MCP filesystem server behind agmem's proxy.
func TestCodex(t *testing.T) {
	codex := agentBinary(t, "codex")
	if !isolate(t) {
		return
	}
	w := newWorld(t)
	patch := func(body string) map[string]any {
		return map[string]any{"input": "*** Begin Patch\n" + body + "*** End Patch\n"}
	}
	script := []step{
		{what: "list the files", tool: "exec_command", reported: "Bash", args: map[string]any{"cmd": "ls -la " + w.project}},
		{what: "read a file", tool: "exec_command", reported: "Bash", args: map[string]any{"cmd": "cat " + filepath.Join(w.project, "notes.txt")}},
		{what: "write a file", tool: "apply_patch", args: patch("*** Add File: " + filepath.Join(w.project, "out.txt") +
			"\n+written by the scripted model through Codex's apply_patch tool\n")},
		{what: "a shell command that fails", tool: "exec_command", reported: "Bash", args: map[string]any{"cmd": "cat " + filepath.Join(w.project, "does-not-exist.txt")}},
		{what: "a tool call that fails: an MCP read of a missing file", server: "filesystem", tool: "read_text_file",
			args: map[string]any{"path": filepath.Join(w.project, "missing.txt")}},
		{what: "a refused call: a patch that fails its check", tool: "apply_patch", args: patch("*** Update File: " +
			filepath.Join(w.project, "missing.txt") + "\n@@\n-old\n+new\n")},
		{what: "an MCP call through agmem mcp proxy", server: "filesystem", tool: "read_text_file", args: map[string]any{"path": filepath.Join(w.project, "file-2.txt")}},
		{what: "agmem's memory search", server: "agmem", tool: "search", args: map[string]any{"query": seedMarker}},
		{what: "the final answer", answer: finalAnswer},
	}
	model := startModel(t, filepath.Join(w.dir, "requests"), script, openAIResponses)

	// The model provider and the MCP server first: agmem's installers add to the file.
	command, args := w.mcpProxy()
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	codexHome := filepath.Join(w.home, ".codex")
	w.write(filepath.Join(codexHome, "config.toml"), fmt.Sprintf(`model = "gpt-5.5"
model_provider = "scripted"

[model_providers.scripted]
name = "scripted"
base_url = "%s/v1"
env_key = "SCRIPTED_MODEL_KEY"
wire_api = "responses"

# Codex exports metrics on its way out, and waits for the network to refuse.
[analytics]
enabled = false

[mcp_servers.filesystem]
command = %q
args = [%s]
`, model.url(), command, strings.Join(quoted, ", ")))
	w.agmemOK("hooks", "install", "codex")
	w.agmemOK("mcp", "install", "codex")
	hooksFile := filepath.Join(codexHome, "hooks.json")
	settings := w.settingsJSON(hooksFile)
	w.addRawHooks(settings, codexEvents, func(event, command string) map[string]any {
		// 3 s: Codex cuts SessionEnd's hooks to that, and says so.
		return map[string]any{"hooks": []any{map[string]any{"type": "command", "command": command, "timeout": 3}}}
	})
	w.writeJSON(hooksFile, settings)

	// Codex runs a hook only once a person trusted it in its interactive interface; a
	// test has no person.
	stdout, _ := w.runAgent(codex, []string{"exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
		"--dangerously-bypass-hook-trust", "--json", "AGMEM-E2E: work through the script."},
		"SCRIPTED_MODEL_KEY=sk-e2e-scripted")

	calls, events := codexOracle(w.payloads())
	w.checkScript(model, calls, stdout)
	w.checkMemory("codex", calls, events)
	w.checkMemorySearch(model, calls)
	w.checkMCPCallOnce(1)
	w.checkContext(model, hooksFile, false)
}

// codexOracle reads what Codex reported: each call of PostToolUse, each PreToolUse that no
// PostToolUse followed (a patch that failed its check, an MCP call that failed: failed,
// with no result), and the session events.
func codexOracle(payloads []payload) (calls []wantCall, events []wantEvent) {
	finished := map[string]bool{}
	for _, p := range payloads {
		if p.event == "PostToolUse" {
			finished[p.str("tool_use_id")] = true
		}
	}
	for _, p := range payloads {
		c := wantCall{from: p.file, tool: p.str("tool_name"), args: p.fields["tool_input"], session: p.str("session_id"),
			toolUseID: p.str("tool_use_id"), cwd: p.str("cwd")}
		switch p.event {
		case "PostToolUse":
			c.result = p.fields["tool_response"]
			calls = append(calls, c)
		case "PreToolUse":
			if !finished[c.toolUseID] {
				c.from += " (no PostToolUse followed)"
				c.failed = true
				calls = append(calls, c)
			}
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
	return calls, events
}

// openAIResponses speaks the OpenAI Responses API as Codex uses it: POST /v1/responses,
// streamed as server-sent events, one request per turn. apply_patch is a custom
// (free-form) tool, the others functions; MCP tools are deferred: the model finds them
// with Codex's tool_search, which answers with a namespace of functions
// (mcp__<server>), called by namespace and name.
func openAIResponses(m *scriptedModel, w http.ResponseWriter, r *http.Request, body []byte) {
	if r.URL.Path != "/v1/responses" {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Model string         `json:"model"`
		Tools []responseTool `json:"tools"`
		Input []struct {
			Type  string         `json:"type"`
			Tools []responseTool `json:"tools"` // tool_search_output
		} `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var tr turn
	custom := map[string]bool{}
	namespaced := map[string][2]string{} // offered name → namespace, name
	searchable := false
	offer := func(tools []responseTool) {
		for _, t := range tools {
			switch t.Type {
			case "tool_search":
				searchable = true
			case "namespace":
				for _, f := range t.Tools {
					name := t.Name + "__" + f.Name
					tr.tools = append(tr.tools, name)
					namespaced[name] = [2]string{t.Name, f.Name}
				}
			default:
				tr.tools = append(tr.tools, t.Name)
				custom[t.Name] = t.Type == "custom"
			}
		}
	}
	offer(req.Tools)
	for _, item := range req.Input {
		if strings.HasSuffix(item.Type, "_call_output") {
			tr.results++
		}
		offer(item.Tools)
	}
	id := fmt.Sprintf("e2e_%d", tr.results+1)
	var item map[string]any
	s, name := step{answer: "ok"}, ""
	switch {
	case len(req.Tools) == 0:
	case searchable && tr.results < len(m.script) && m.script[tr.results].server != "" && !offered(m.script[tr.results], tr.tools):
		s = m.script[tr.results]
		item = map[string]any{"type": "tool_search_call", "id": "ts_" + id, "call_id": "call_ts_" + id, "execution": "client",
			"status": "completed", "arguments": map[string]any{"query": s.server + " " + s.tool}}
	default:
		s, name = m.next(tr)
	}
	switch {
	case item != nil:
	case name == "":
		item = map[string]any{"type": "message", "id": "msg_" + id, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": s.answer, "annotations": []any{}}}}
	case custom[name]:
		item = map[string]any{"type": "custom_tool_call", "id": "ctc_" + id, "call_id": "call_" + id, "name": name,
			"input": s.args["input"], "status": "completed"}
	default:
		item = map[string]any{"type": "function_call", "id": "fc_" + id, "call_id": "call_" + id, "name": name,
			"arguments": mustJSON(s.args), "status": "completed"}
		if ns, ok := namespaced[name]; ok {
			item["namespace"], item["name"] = ns[0], ns[1]
		}
	}
	response := map[string]any{"id": "resp_" + id, "object": "response", "status": "in_progress", "model": req.Model, "output": []any{}}
	events := newSSE(w)
	events.send("response.created", map[string]any{"type": "response.created", "response": response})
	events.send("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	if item["type"] == "message" {
		events.send("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": item["id"],
			"output_index": 0, "content_index": 0, "delta": s.answer})
	}
	events.send("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	response["status"], response["output"] = "completed", []any{item}
	response["usage"] = map[string]any{"input_tokens": 100, "output_tokens": 10, "total_tokens": 110,
		"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}
	events.send("response.completed", map[string]any{"type": "response.completed", "response": response})
}

// responseTool is a tool as the Responses API lists it: a function, a custom tool, a
// hosted one (tool_search, web_search), or a namespace of functions.
type responseTool struct {
	Type  string         `json:"type"`
	Name  string         `json:"name"`
	Tools []responseTool `json:"tools"`
}

func offered(s step, tools []string) bool {
	_, err := s.toolName(tools)
	return err == nil
}
