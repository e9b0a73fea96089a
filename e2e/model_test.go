package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// step is what the scripted model does at one turn of the session: call a tool, or, at
// the last step, give its final answer.
type step struct {
	what   string // what the step is for, in failure messages
	tool   string // the tool's name as the agent offers it, or an MCP tool's own name
	server string // the MCP server whose tool it is ("" for the agent's own tools)
	// reported is the tool's name in the agent's hook payloads, where it is not the one
	// the model calls it by (Codex reports exec_command as Bash).
	reported string
	args     map[string]any
	answer   string // the final answer, for the step with no tool
}

// toolName is the name the agent offered the model for the step's tool: its own name, or
// for an MCP tool the one offered name that holds the server's and ends with the tool's
// (Claude Code's mcp__server__tool, Gemini CLI's server's tool, Codex's namespaced ones).
func (s step) toolName(offered []string) (string, error) {
	var found []string
	for _, name := range offered {
		switch {
		case s.server == "" && name == s.tool:
			return name, nil
		case s.server != "" && strings.HasSuffix(name, s.tool) && strings.Contains(name, s.server):
			found = append(found, name)
		}
	}
	if len(found) == 1 {
		return found[0], nil
	}
	return "", fmt.Errorf("step %q: the agent offered the model no single tool %s of server %q: %d match, offered: %s",
		s.what, s.tool, s.server, len(found), strings.Join(offered, " "))
}

// turn is a model request as an agent's wire protocol reads: the tools it offers and how
// many tool results it holds, which says which step of the script comes next.
type turn struct {
	tools   []string
	results int
}

// scriptedModel is a model server on 127.0.0.1 that answers each of an agent's turns with
// the next step of a script, and keeps every request it was sent. The step is told by the
// number of tool results the conversation holds, so a retried request gets the same
// answer, and a request that offers no tools (a title, a classification) gets a short text.
type scriptedModel struct {
	script []step
	server *httptest.Server
	dir    string // where each request is kept, as NN-<path>.json

	mu       sync.Mutex
	requests []modelRequest
	problems []string
	called   map[int]string // the offered name each tool step was called by
	start    int            // how many requests had come when the first step was answered
}

type modelRequest struct {
	path string
	body []byte
}

// startModel serves handle, a wire protocol, on 127.0.0.1 until the test ends.
func startModel(t *testing.T, dir string, script []step, handle func(m *scriptedModel, w http.ResponseWriter, r *http.Request, body []byte)) *scriptedModel {
	m := &scriptedModel{script: script, dir: dir, called: map[int]string{}}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// httptest listens on 127.0.0.1:0, never on another address.
	m.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		m.keep(r.URL.RequestURI(), body)
		handle(m, w, r, body)
	}))
	t.Cleanup(m.server.Close)
	return m
}

func (m *scriptedModel) url() string { return m.server.URL }

func (m *scriptedModel) keep(path string, body []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests = append(m.requests, modelRequest{path, body})
	name := fmt.Sprintf("%02d-%s.json", len(m.requests), strings.Trim(strings.NewReplacer("/", "_", "?", "_", ":", "_").Replace(path), "_"))
	_ = os.WriteFile(filepath.Join(m.dir, name), body, 0o644)
}

// problem notes what went wrong in the server, for the test to report.
func (m *scriptedModel) problem(format string, args ...any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.problems = append(m.problems, fmt.Sprintf(format, args...))
}

// next is the step that answers the turn: a tool call (its offered name) or the answer.
// A turn past the script, or one whose tool is not offered, ends the session.
func (m *scriptedModel) next(tr turn) (s step, name string) {
	if tr.results >= len(m.script) {
		m.problem("a turn with %d tool results, past the script's %d steps", tr.results, len(m.script))
		return step{answer: "The script is over."}, ""
	}
	s = m.script[tr.results]
	if s.tool == "" {
		return s, ""
	}
	name, err := s.toolName(tr.tools)
	if err != nil {
		m.problem("%v", err)
		return step{answer: "The script cannot go on: " + err.Error()}, ""
	}
	m.mu.Lock()
	m.called[tr.results] = name
	if tr.results == 0 && m.start == 0 {
		m.start = len(m.requests)
	}
	m.mu.Unlock()
	return s, name
}

// calledAs is the name the model called step i's tool by; "" if it never came to it.
func (m *scriptedModel) calledAs(i int) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.called[i]
}

// sawTextAtStart reports whether a request to the model up to the session's first turn
// held text in one of its strings (a system prompt, a message), decoded from its JSON.
func (m *scriptedModel) sawTextAtStart(text string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.requests[:m.start] {
		var v any
		if json.Unmarshal(r.body, &v) == nil && anyString(v, func(s string) bool { return strings.Contains(s, text) }) {
			return true
		}
	}
	return false
}

func (m *scriptedModel) report() (requests int, problems []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.requests), append([]string(nil), m.problems...)
}

func anyString(v any, ok func(string) bool) bool {
	switch v := v.(type) {
	case string:
		return ok(v)
	case []any:
		for _, e := range v {
			if anyString(e, ok) {
				return true
			}
		}
	case map[string]any:
		for _, e := range v {
			if anyString(e, ok) {
				return true
			}
		}
	}
	return false
}

// sse writes server-sent events: each an event name ("" for none) and its JSON data.
type sse struct {
	w http.ResponseWriter
}

func newSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return sse{w}
}

func (s sse) send(event string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	if event != "" {
		fmt.Fprintf(s.w, "event: %s\n", event)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// mustJSON is v's compact JSON, with <, > and & as they are.
func mustJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
