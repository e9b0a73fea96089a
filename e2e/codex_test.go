package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
)

// codexEvents are the hook events Codex CLI 0.171.0 has, which the raw hook gets.
var codexEvents = []string{"PreToolUse", "PostToolUse", "PermissionRequest", "SessionStart", "SessionEnd",
	"UserPromptSubmit", "Stop", "SubagentStart", "SubagentStop", "PreCompact", "PostCompact"}

// TestCodex runs Codex CLI headless (codex exec) through the script, with agmem's hooks
// and memory MCP server installed and the MCP filesystem server behind agmem's proxy.
// Before the run, agmem must tell that Codex trusts none of its hooks, and once Codex has
// trusted them (the hash being Codex's own), that it trusts them all.
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

	// Codex runs a hook only once a person trusted it; the test trusts them as a person
	// would, through Codex's own app-server, and runs the agent without bypassing that.
	w.checkCodexTrust(codex, hooksFile)
	stdout, _ := w.runAgent(codex, []string{"exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
		"--json", "AGMEM-E2E: work through the script."},
		"SCRIPTED_MODEL_KEY=sk-e2e-scripted")

	calls, events := codexOracle(w.payloads())
	w.checkRun(model, "codex", stdout, calls, events)
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

// checkCodexTrust checks what agmem hooks status says of Codex's trust in agmem's hooks
// in hooksFile against Codex itself (codex app-server's hooks/list): untrusted once
// installed; then trusts every hook in the file as Codex's "Trust all and continue" does
// (config/batchWrite of the hash Codex gives each), after which agmem must tell them all
// trusted: agmem's hash of a hook is Codex's.
func (w *world) checkCodexTrust(codex, hooksFile string) {
	w.t.Helper()
	events := w.checkAgmemTrust(false)
	real, err := filepath.EvalSymlinks(hooksFile)
	if err != nil {
		w.t.Fatal(err)
	}
	codexHome := filepath.Join(w.home, ".codex")
	srv := w.startAppServer(codex)
	var init struct {
		CodexHome string `json:"codexHome"`
	}
	srv.call("initialize", map[string]any{"clientInfo": map[string]any{"name": "agmem-e2e", "version": "0"}}, &init)
	if init.CodexHome != codexHome {
		w.t.Fatalf("codex app-server keeps its settings in %q, not in %q (CODEX_HOME)", init.CodexHome, codexHome)
	}
	srv.notify("initialized")

	hooks := srv.hooksOf(real, w.project)
	w.checkListedHooks(hooks, events, "untrusted")
	var edits []any
	for _, h := range hooks {
		if strings.ContainsAny(h.Key, `"\`) {
			w.t.Fatalf("hook key %q needs quoting this test does not do", h.Key)
		}
		edits = append(edits, map[string]any{"keyPath": fmt.Sprintf(`hooks.state.%q.trusted_hash`, h.Key),
			"value": h.CurrentHash, "mergeStrategy": "upsert"})
	}
	var wrote struct {
		Status   string `json:"status"`
		FilePath string `json:"filePath"`
	}
	srv.call("config/batchWrite", map[string]any{"edits": edits}, &wrote)
	if config := filepath.Join(codexHome, "config.toml"); wrote.Status != "ok" || wrote.FilePath != config {
		w.t.Fatalf("codex app-server config/batchWrite: status %q, wrote %q, not %q", wrote.Status, wrote.FilePath, config)
	}
	w.checkListedHooks(srv.hooksOf(real, w.project), events, "trusted")
	srv.close()

	w.checkAgmemTrust(true)
}

// checkAgmemTrust checks that agmem hooks status (--json, and as text) says Codex trusts
// all of agmem's hooks in the user's hooks.json, or none, and returns their events.
func (w *world) checkAgmemTrust(trusted bool) (events []string) {
	w.t.Helper()
	var all []hooksStatus
	out := w.agmemOK("hooks", "status", "--json")
	if err := json.Unmarshal([]byte(out), &all); err != nil {
		w.t.Fatalf("agmem hooks status --json: %v\n%s", err, out)
	}
	i := slices.IndexFunc(all, func(st hooksStatus) bool {
		return st.Agent == "codex" && st.Scope == "user"
	})
	if i < 0 || all[i].Trust == nil || len(all[i].Events) == 0 {
		w.t.Fatalf("agmem hooks status --json tells nothing of Codex's trust in agmem's hooks of the user's hooks.json:\n%s", out)
	}
	st, tr := all[i], all[i].Trust
	if want := filepath.Join(w.home, ".codex", "config.toml"); tr.Config != want {
		w.t.Errorf("agmem hooks status --json: Codex's trust is read from %q, not %q", tr.Config, want)
	}
	want, wantNot := &tr.Untrusted, &tr.Trusted
	if trusted {
		want, wantNot = wantNot, want
	}
	if !sameSet(*want, st.Events) || len(*wantNot)+len(tr.Changed)+len(tr.Disabled) > 0 || tr.Project != "" || tr.Error != "" {
		w.t.Errorf("agmem hooks status --json, with Codex trusting %s of agmem's hooks (of %v), tells a wrong trust: %s",
			map[bool]string{true: "all", false: "none"}[trusted], st.Events, mustJSON(tr))
	}

	text := w.agmemOK("hooks", "status")
	if trusted {
		if !strings.Contains(text, "trusted by Codex CLI (") || strings.Contains(text, "not trusted") {
			w.t.Errorf("agmem hooks status, with Codex trusting all of agmem's hooks, does not say so:\n%s", text)
		}
	} else if !strings.Contains(text, "not trusted by Codex CLI") || !strings.Contains(text, "Trust all and continue") {
		w.t.Errorf("agmem hooks status, with Codex trusting none of agmem's hooks, does not say so and how to trust them:\n%s", text)
	}
	return st.Events
}

// hooksStatus is what agmem hooks status --json tells of an agent's hooks of one scope.
type hooksStatus struct {
	Agent  string   `json:"agent"`
	Scope  string   `json:"scope"`
	Events []string `json:"events"`
	Trust  *struct {
		Config    string   `json:"config"`
		Trusted   []string `json:"trusted"`
		Untrusted []string `json:"untrusted"`
		Changed   []string `json:"changed"`
		Disabled  []string `json:"disabled"`
		Project   string   `json:"project_untrusted"`
		Error     string   `json:"error"`
	} `json:"trust"`
}

// codexHook is a hook as codex app-server's hooks/list gives it.
type codexHook struct {
	Key         string `json:"key"` // <hooks.json>:<event, snake_case>:<group>:<hook>
	Command     string `json:"command"`
	CurrentHash string `json:"currentHash"`
	TrustStatus string `json:"trustStatus"` // trusted, untrusted, modified, managed
	Source      string `json:"source"`
	Enabled     bool   `json:"enabled"`
}

// checkListedHooks checks that the hooks Codex lists of the hooks file are agmem's, of
// events, and the raw hook's, of every event, each enabled and with the trust status.
func (w *world) checkListedHooks(hooks []codexHook, events []string, status string) {
	w.t.Helper()
	var ours, raw []string
	for _, h := range hooks {
		parts := strings.Split(h.Key, ":")
		event := pascalCase(parts[max(len(parts)-3, 0)])
		if strings.HasPrefix(h.Command, shellQuote(filepath.Join(w.dir, "raw-hook.sh"))) {
			raw = append(raw, event)
		} else {
			ours = append(ours, event)
		}
		if h.TrustStatus != status || !h.Enabled || h.Source != "user" {
			w.t.Errorf("codex app-server lists hook %s (%s) as %s, enabled %v, of %q: want %s, enabled, of the user's",
				h.Key, h.Command, h.TrustStatus, h.Enabled, h.Source, status)
		}
	}
	if !sameSet(ours, events) {
		w.t.Errorf("codex app-server lists agmem's hooks of events %v; agmem hooks status tells of %v", ours, events)
	}
	if !sameSet(raw, codexEvents) {
		w.t.Errorf("codex app-server lists the raw hook for events %v, not %v", raw, codexEvents)
	}
}

// appServerTimeout bounds one exchange with codex app-server, which answers in well under
// a second.
const appServerTimeout = 30 * time.Second

// appServer is codex app-server, spoken to in JSON-RPC over its standard input and output,
// one message a line.
type appServer struct {
	w      *world
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte // closed when its output ends
	cancel context.CancelFunc
	stderr *os.File
	id     int
}

// startAppServer starts codex app-server in the project, with the agent's environment.
func (w *world) startAppServer(codex string) *appServer {
	w.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &appServer{w: w, lines: make(chan []byte, 16), cancel: cancel, stderr: w.create("app-server.stderr")}
	s.cmd = exec.CommandContext(ctx, codex, "app-server")
	s.cmd.Dir, s.cmd.Env, s.cmd.Stderr = w.project, w.env, s.stderr
	ownProcessGroup(s.cmd)
	s.cmd.WaitDelay = 5 * time.Second
	var err error
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		w.t.Fatal(err)
	}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		w.t.Fatalf("codex app-server: %v", err)
	}
	w.t.Cleanup(func() { s.kill() })
	go func() {
		defer close(s.lines)
		r := bufio.NewReader(stdout)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				s.lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	return s
}

func (s *appServer) send(msg map[string]any) {
	s.w.t.Helper()
	msg["jsonrpc"] = "2.0"
	if _, err := s.stdin.Write([]byte(mustJSON(msg) + "\n")); err != nil {
		s.fail("cannot write to codex app-server: %v", err)
	}
}

func (s *appServer) notify(method string) {
	s.w.t.Helper()
	s.send(map[string]any{"method": method})
}

// call sends a request and decodes its result into result, passing over the
// notifications that come before; it fails the test on an error or after appServerTimeout.
func (s *appServer) call(method string, params, result any) {
	s.w.t.Helper()
	s.id++
	s.send(map[string]any{"id": s.id, "method": method, "params": params})
	timeout := time.NewTimer(appServerTimeout)
	defer timeout.Stop()
	for {
		var line []byte
		var ok bool
		select {
		case line, ok = <-s.lines:
			if !ok {
				s.fail("codex app-server ended before answering %s", method)
			}
		case <-timeout.C:
			s.fail("codex app-server did not answer %s in %v", method, appServerTimeout)
		}
		var msg struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(line, &msg); err != nil {
			s.fail("codex app-server wrote no JSON-RPC message: %v: %s", err, line)
		}
		if msg.ID == nil || *msg.ID != s.id || msg.Method != "" {
			continue // a notification, or a request of the server's, which these exchanges do not bring
		}
		if msg.Error != nil {
			s.fail("codex app-server %s %s: %s", method, mustJSON(params), msg.Error)
		}
		if err := json.Unmarshal(msg.Result, result); err != nil {
			s.fail("codex app-server %s: %v: %s", method, err, msg.Result)
		}
		return
	}
}

// hooksOf is what hooks/list gives, for cwd, of the hooks of the hooks file at path (its
// real path, which Codex keys hooks by).
func (s *appServer) hooksOf(path, cwd string) []codexHook {
	s.w.t.Helper()
	var list struct {
		Data []struct {
			Cwd      string            `json:"cwd"`
			Hooks    []codexHook       `json:"hooks"`
			Warnings []json.RawMessage `json:"warnings"`
			Errors   []json.RawMessage `json:"errors"`
		} `json:"data"`
	}
	s.call("hooks/list", map[string]any{"cwds": []string{cwd}}, &list)
	var hooks []codexHook
	for _, d := range list.Data {
		if len(d.Errors) > 0 {
			s.w.t.Errorf("codex app-server hooks/list of %s: errors %s", d.Cwd, mustJSON(d.Errors))
		}
		if len(d.Warnings) > 0 {
			s.w.t.Logf("codex app-server hooks/list of %s: warnings %s", d.Cwd, mustJSON(d.Warnings))
		}
		for _, h := range d.Hooks {
			if strings.HasPrefix(h.Key, path+":") {
				hooks = append(hooks, h)
			}
		}
	}
	if len(hooks) == 0 {
		s.w.t.Fatalf("codex app-server hooks/list of %s lists no hook of %s: %s", cwd, path, mustJSON(list))
	}
	return hooks
}

// close ends codex app-server as a client does, closing its input, and waits for it.
func (s *appServer) close() {
	s.w.t.Helper()
	s.stdin.Close()
	timeout := time.NewTimer(appServerTimeout)
	defer timeout.Stop()
	for done := false; !done; {
		select {
		case _, ok := <-s.lines:
			done = !ok
		case <-timeout.C:
			s.fail("codex app-server did not end in %v once its input was closed", appServerTimeout)
		}
	}
	if err := s.cmd.Wait(); err != nil {
		s.fail("codex app-server: %v", err)
	}
	s.stderr.Close()
	if err := waitForOrphans(5 * time.Second); err != nil {
		s.w.t.Error(err)
	}
}

// kill ends codex app-server, and all it started, at once.
func (s *appServer) kill() {
	s.cancel()
	if s.cmd.ProcessState == nil {
		_ = s.cmd.Wait()
	}
	s.stderr.Close()
}

func (s *appServer) fail(format string, args ...any) {
	s.w.t.Helper()
	s.kill()
	s.w.t.Fatalf(format+"\ncodex app-server's stderr:\n%s", append(args, tail(s.w.read(s.stderr.Name())))...)
}

// pascalCase is an event's name as agmem and the hooks file give it: post_tool_use is
// PostToolUse.
func pascalCase(snake string) string {
	var b strings.Builder
	for _, word := range strings.Split(snake, "_") {
		if word != "" {
			r := []rune(word)
			b.WriteString(string(unicode.ToUpper(r[0])) + string(r[1:]))
		}
	}
	return b.String()
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}
