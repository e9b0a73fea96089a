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

// geminiEvents are the hook events Gemini CLI 0.61.0 has, which the raw hook gets.
var geminiEvents = []string{"SessionStart", "SessionEnd", "BeforeAgent", "AfterAgent", "BeforeModel", "AfterModel",
	"BeforeToolSelection", "BeforeTool", "AfterTool", "PreCompress", "Notification"}

// TestGemini runs Gemini CLI headless (gemini -p) through the script, with agmem's hooks
// and memory MCP server installed and the MCP filesystem server behind agmem's proxy.
func TestGemini(t *testing.T) {
	gemini := agentBinary(t, "gemini")
	if !isolate(t) {
		return
	}
	w := newWorld(t)
	script := []step{
		{what: "list the files", tool: "list_directory", args: map[string]any{"dir_path": w.project}},
		{what: "read a file", tool: "read_file", args: map[string]any{"file_path": filepath.Join(w.project, "notes.txt")}},
		{what: "write a file", tool: "write_file", args: map[string]any{"file_path": filepath.Join(w.project, "out.txt"),
			"content": "written by the scripted model through Gemini CLI's write_file tool\n"}},
		{what: "a shell command that fails", tool: "run_shell_command", args: map[string]any{"command": "cat " + filepath.Join(w.project, "does-not-exist.txt"), "description": "A command that fails"}},
		{what: "a tool call that fails", tool: "read_file", args: map[string]any{"file_path": filepath.Join(w.project, "missing.txt")}},
		// Gemini CLI refuses it before any hook runs: nothing reports it to agmem.
		{what: "a refused call: a read outside the workspace", tool: "read_file", args: map[string]any{"file_path": "/etc/hostname"}},
		{what: "an MCP call through agmem mcp proxy", server: "filesystem", tool: "read_text_file", args: map[string]any{"path": filepath.Join(w.project, "file-2.txt")}},
		{what: "agmem's memory search", server: "agmem", tool: "search", args: map[string]any{"query": seedMarker}},
		{what: "the final answer", answer: finalAnswer},
	}
	model := startModel(t, filepath.Join(w.dir, "requests"), script, geminiAPI)

	// The API key's auth and the MCP server first: agmem's installers add to the file.
	settingsFile := filepath.Join(w.home, ".gemini", "settings.json")
	command, args := w.mcpProxy()
	w.writeJSON(settingsFile, map[string]any{
		"security":   map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"mcpServers": map[string]any{"filesystem": map[string]any{"command": command, "args": args}},
		// Nothing to look for on the network, where nothing answers.
		"general": map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
		"privacy": map[string]any{"usageStatisticsEnabled": false},
	})
	w.agmemOK("hooks", "install", "gemini")
	w.agmemOK("mcp", "install", "gemini")
	settings := w.settingsJSON(settingsFile)
	w.addRawHooks(settings, geminiEvents, func(event, command string) map[string]any {
		group := map[string]any{"hooks": []any{map[string]any{"name": "raw", "type": "command", "command": command, "timeout": 10000}}}
		if event == "BeforeTool" || event == "AfterTool" {
			group["matcher"] = "*"
		}
		return group
	})
	w.writeJSON(settingsFile, settings)

	stdout, _ := w.runAgent(gemini, []string{"-p", "AGMEM-E2E: work through the script.", "--output-format", "json", "--approval-mode", "yolo"},
		"GOOGLE_GEMINI_BASE_URL="+model.url(),
		"GEMINI_API_KEY=e2e-scripted",
		// Else Gemini CLI turns yolo mode off in a folder it does not trust.
		"GEMINI_CLI_TRUST_WORKSPACE=true")

	calls, events := geminiOracle(w.payloads())
	w.checkRun(model, "gemini-cli", stdout, calls, events)
}

// geminiOracle reads what Gemini CLI reported: each call of AfterTool (failed when its
// response has an error, or its output says the command exited with another code than
// 0), each BeforeTool no AfterTool followed, and the session events.
func geminiOracle(payloads []payload) (calls []wantCall, events []wantEvent) {
	afterTool := map[string]int{} // tool and arguments → AfterTool payloads
	for _, p := range payloads {
		if p.event == "AfterTool" {
			afterTool[p.str("tool_name")+" "+compact(p.fields["tool_input"])]++
		}
	}
	for _, p := range payloads {
		c := wantCall{from: p.file, tool: p.str("tool_name"), args: p.fields["tool_input"], session: p.str("session_id"),
			cwd: p.str("cwd"), timestamp: p.str("timestamp")}
		switch p.event {
		case "AfterTool":
			var response struct {
				LLMContent json.RawMessage `json:"llmContent"`
				Error      json.RawMessage `json:"error"`
			}
			c.result = p.fields["tool_response"]
			if json.Unmarshal(p.fields["tool_response"], &response) == nil && (response.LLMContent != nil || response.Error != nil) {
				c.result = response.LLMContent
			}
			if msg := geminiError(response.Error); msg != "" {
				c.failed, c.errorIs, c.result = true, msg, nil
			}
			var text string
			_ = json.Unmarshal(response.LLMContent, &text)
			if m := exitCode.FindStringSubmatch(text); m != nil && m[1] != "0" {
				c.failed, c.result = true, nil
			}
			calls = append(calls, c)
		case "BeforeTool":
			key := c.tool + " " + compact(c.args)
			if afterTool[key] > 0 {
				afterTool[key]--
				continue
			}
			c.from += " (no AfterTool followed)"
			c.failed = true
			calls = append(calls, c)
		case "SessionStart":
			events = append(events, wantEvent{from: p.file, name: p.event, session: p.str("session_id")})
		case "BeforeAgent":
			events = append(events, wantEvent{from: p.file, name: "UserPromptSubmit", text: p.str("prompt"), session: p.str("session_id")})
		case "AfterAgent":
			events = append(events, wantEvent{from: p.file, name: "Stop", text: p.str("prompt_response"), session: p.str("session_id")})
		case "SessionEnd":
			events = append(events, wantEvent{from: p.file, name: p.event, text: p.str("reason"), session: p.str("session_id")})
		}
	}
	return calls, events
}

// exitCode is how run_shell_command tells the model the command's exit status.
var exitCode = regexp.MustCompile(`(?m)^Exit Code: (-?\d+)`)

// geminiError is a tool response's error: a string, or an object's message.
func geminiError(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(raw, &obj)
	return obj.Message
}

// geminiAPI speaks the Gemini API as Gemini CLI uses it: a router request
// (:generateContent, wanting JSON {complexity_reasoning, complexity_score}) that picks
// the model, then :streamGenerateContent?alt=sse per turn. A function call's id comes
// back in its functionResponse.
func geminiAPI(m *scriptedModel, w http.ResponseWriter, r *http.Request, body []byte) {
	_, method, _ := strings.Cut(r.URL.Path, ":")
	var req struct {
		Contents []struct {
			Parts []struct {
				FunctionResponse json.RawMessage `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
		Tools []struct {
			FunctionDeclarations []struct {
				Name string `json:"name"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	usage := map[string]any{"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110}
	answer := func(parts ...any) map[string]any {
		return map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts},
			"finishReason": "STOP", "index": 0}}, "usageMetadata": usage}
	}
	switch method {
	case "countTokens":
		writeJSON(w, map[string]any{"totalTokens": 100})
	case "generateContent":
		text := "ok"
		if strings.Contains(string(body), "complexity_score") {
			text = mustJSON(map[string]any{"complexity_reasoning": "a scripted session", "complexity_score": 10})
		}
		writeJSON(w, answer(map[string]any{"text": text}))
	case "streamGenerateContent":
		var tr turn
		for _, t := range req.Tools {
			for _, f := range t.FunctionDeclarations {
				tr.tools = append(tr.tools, f.Name)
			}
		}
		for _, c := range req.Contents {
			for _, p := range c.Parts {
				if p.FunctionResponse != nil {
					tr.results++
				}
			}
		}
		part := map[string]any{"text": "ok"}
		if len(tr.tools) > 0 {
			s, name := m.next(tr)
			part = map[string]any{"text": s.answer}
			if name != "" {
				part = map[string]any{"functionCall": map[string]any{"name": name, "args": s.args, "id": fmt.Sprintf("e2e-%d", tr.results+1)}}
			}
		}
		newSSE(w).send("", answer(part))
	default:
		http.NotFound(w, r)
	}
}
