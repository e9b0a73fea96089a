package capture

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestAgentPayloads decodes every event of every agent agmem knows, and checks that
// each is taken for its own agent's: the source, the session, and what it became.
func TestAgentPayloads(t *testing.T) {
	long := strings.Repeat("output line\n", 8)
	for _, c := range []struct {
		name, payload string
		source        string
		session       string
		tool          string // an observation of this tool; "" for an event
		event         string // an event of this name; "" for an observation
		has           string // text the entry holds (the result or the event's text)
		skip          bool
	}{
		// Claude Code
		{name: "claude PostToolUse", payload: `{"session_id":"c1","transcript_path":"/t","cwd":"/w","permission_mode":"default","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_response":{"stdout":"` + strings.ReplaceAll(long, "\n", `\n`) + `","stderr":""},"tool_use_id":"toolu_1"}`,
			source: SourceClaudeCode, session: "c1", tool: "Bash", has: "output line"},
		{name: "claude SessionStart", payload: `{"session_id":"c1","cwd":"/w","hook_event_name":"SessionStart","source":"startup","model":"claude-opus"}`,
			source: SourceClaudeCode, session: "c1", event: "SessionStart"},
		{name: "claude UserPromptSubmit", payload: `{"session_id":"c1","hook_event_name":"UserPromptSubmit","prompt":"fix the build"}`,
			source: SourceClaudeCode, session: "c1", event: "UserPromptSubmit", has: "fix the build"},

		// Codex: Claude Code's shapes, with turn_id
		{name: "codex PostToolUse", payload: `{"cwd":"/w","hook_event_name":"PostToolUse","model":"gpt-5-codex","permission_mode":"default","session_id":"x1","transcript_path":"/t","turn_id":"turn-1","tool_name":"shell","tool_input":{"command":["ls","-la"]},"tool_response":"` + strings.ReplaceAll(long, "\n", `\n`) + `","tool_use_id":"call_1"}`,
			source: SourceCodex, session: "x1", tool: "shell", has: "output line"},
		{name: "codex SessionStart", payload: `{"cwd":"/w","hook_event_name":"SessionStart","model":"gpt-5-codex","session_id":"x1","turn_id":"turn-0","source":"startup"}`,
			source: SourceCodex, session: "x1", event: "SessionStart"},
		{name: "codex UserPromptSubmit", payload: `{"cwd":"/w","hook_event_name":"UserPromptSubmit","model":"m","session_id":"x1","turn_id":"turn-1","prompt":"add tests"}`,
			source: SourceCodex, session: "x1", event: "UserPromptSubmit", has: "add tests"},
		{name: "codex Stop", payload: `{"cwd":"/w","hook_event_name":"Stop","model":"m","session_id":"x1","turn_id":"turn-1","last_assistant_message":"done"}`,
			source: SourceCodex, session: "x1", event: "Stop", has: "done"},

		// Gemini CLI
		{name: "gemini AfterTool", payload: `{"session_id":"g1","transcript_path":"/t","cwd":"/w","hook_event_name":"AfterTool","timestamp":"2026-11-30T10:00:00.000Z","tool_name":"read_file","tool_input":{"absolute_path":"/w/a.go"},"tool_response":{"llmContent":"` + strings.ReplaceAll(long, "\n", `\n`) + `","returnDisplay":"Read 8 lines"}}`,
			source: SourceGemini, session: "g1", tool: "read_file", has: "output line"},
		{name: "gemini AfterTool failed", payload: `{"session_id":"g1","cwd":"/w","hook_event_name":"AfterTool","timestamp":"2026-11-30T10:00:01Z","tool_name":"run_shell_command","tool_input":{"command":"make"},"tool_response":{"llmContent":"","returnDisplay":"","error":{"message":"exit status 2","type":"EXECUTION_FAILED"}}}`,
			source: SourceGemini, session: "g1", tool: "run_shell_command", has: "exit status 2"},
		{name: "gemini BeforeAgent", payload: `{"session_id":"g1","cwd":"/w","hook_event_name":"BeforeAgent","timestamp":"2026-11-30T10:00:00Z","prompt":"explain main.go"}`,
			source: SourceGemini, session: "g1", event: "UserPromptSubmit", has: "explain main.go"},
		{name: "gemini AfterAgent", payload: `{"session_id":"g1","cwd":"/w","hook_event_name":"AfterAgent","timestamp":"2026-11-30T10:00:09Z","prompt":"explain main.go","prompt_response":"It starts the server."}`,
			source: SourceGemini, session: "g1", event: "Stop", has: "It starts the server."},
		{name: "gemini SessionStart", payload: `{"session_id":"g1","cwd":"/w","hook_event_name":"SessionStart","timestamp":"2026-11-30T09:59:00Z","trigger":"startup"}`,
			source: SourceGemini, session: "g1", event: "SessionStart"},
		{name: "gemini SessionEnd", payload: `{"session_id":"g1","cwd":"/w","hook_event_name":"SessionEnd","timestamp":"2026-11-30T10:30:00Z","trigger":"exit"}`,
			source: SourceGemini, session: "g1", event: "SessionEnd", has: "exit"},
		{name: "gemini BeforeTool", payload: `{"session_id":"g1","hook_event_name":"BeforeTool","timestamp":"2026-11-30T10:00:00Z","tool_name":"read_file","tool_input":{}}`,
			skip: true},

		// Cursor
		{name: "cursor afterShellExecution", payload: `{"conversation_id":"k1","generation_id":"gen1","model":"claude-4","hook_event_name":"afterShellExecution","workspace_roots":["/w"],"command":"npm test","output":"` + strings.ReplaceAll(long, "\n", `\n`) + `","duration":1200}`,
			source: SourceCursor, session: "k1", tool: "Shell", has: "output line"},
		{name: "cursor afterMCPExecution", payload: `{"conversation_id":"k1","generation_id":"gen1","hook_event_name":"afterMCPExecution","workspace_roots":["/w"],"tool_name":"search_issues","tool_input":"{\"query\":\"flaky\"}","result_json":"{\"content\":[{\"type\":\"text\",\"text\":\"` + strings.ReplaceAll(long, "\n", `\\n`) + `\"}]}","duration":300}`,
			source: SourceCursor, session: "k1", tool: "search_issues", has: "output line"},
		{name: "cursor afterFileEdit", payload: `{"conversation_id":"k1","generation_id":"gen1","hook_event_name":"afterFileEdit","workspace_roots":["/w"],"file_path":"/w/a.go","edits":[{"old_string":"a","new_string":"b"}]}`,
			source: SourceCursor, session: "k1", tool: "Edit"},
		{name: "cursor postToolUse", payload: `{"conversation_id":"k1","generation_id":"gen1","hook_event_name":"postToolUse","workspace_roots":["/w"],"tool_name":"read_file","tool_input":{"target_file":"a.go"},"tool_use_id":"tu1","tool_output":"` + strings.ReplaceAll(long, "\n", `\n`) + `"}`,
			source: SourceCursor, session: "k1", tool: "read_file", has: "output line"},
		{name: "cursor beforeSubmitPrompt", payload: `{"conversation_id":"k1","generation_id":"gen1","hook_event_name":"beforeSubmitPrompt","workspace_roots":["/w"],"prompt":"rename the flag","attachments":[]}`,
			source: SourceCursor, session: "k1", event: "UserPromptSubmit", has: "rename the flag"},
		{name: "cursor stop", payload: `{"conversation_id":"k1","generation_id":"gen1","hook_event_name":"stop","workspace_roots":["/w"],"status":"completed"}`,
			source: SourceCursor, session: "k1", event: "Stop", has: "completed"},
		{name: "cursor beforeShellExecution", payload: `{"conversation_id":"k1","hook_event_name":"beforeShellExecution","workspace_roots":["/w"],"command":"rm -rf /"}`,
			skip: true},

		// no agent's
		{name: "unknown event", payload: `{"session_id":"u1","hook_event_name":"SomethingNew","data":1}`, skip: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := Decode([]byte(c.payload), defaultPolicy(), time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if c.skip {
				if len(d.Entries) != 0 || len(d.Skipped) != 1 {
					t.Fatalf("want it skipped with a reason, got %+v", d)
				}
				return
			}
			if len(d.Entries) != 1 {
				t.Fatalf("got %d entries (skipped: %v)", len(d.Entries), d.Skipped)
			}
			e := d.Entries[0]
			if e.Source() != c.source || e.Session() != c.session {
				t.Errorf("source %q session %q, want %q %q", e.Source(), e.Session(), c.source, c.session)
			}
			var text string
			switch {
			case c.tool != "":
				o := e.Observation
				if o == nil || o.ToolName != c.tool {
					t.Fatalf("want an observation of %s, got %+v", c.tool, e)
				}
				text = o.ResultText() + o.Error
			default:
				ev := e.Event
				if ev == nil || ev.Name != c.event {
					t.Fatalf("want event %s, got %+v", c.event, e)
				}
				text = ev.Text
			}
			if !strings.Contains(text, c.has) {
				t.Errorf("entry holds %q, want %q in it", text, c.has)
			}
		})
	}
}

func TestAgentPayloadsReviewed(t *testing.T) {
	long := strings.Repeat("output line ", 8)
	// Gemini CLI's docs show tool_response as a string too.
	d, err := Decode([]byte(`{"session_id":"g1","hook_event_name":"AfterTool","timestamp":"2026-11-30T10:00:00Z","tool_name":"run_shell_command","tool_input":{"command":"ls"},"tool_response":"`+long+`"}`), defaultPolicy(), time.Now())
	if err != nil || len(d.Entries) != 1 || !strings.Contains(d.Entries[0].Observation.ResultText(), "output line") {
		t.Errorf("gemini AfterTool with a string response: %+v, %v", d, err)
	}
	// Cursor reports a shell call twice on builds that send postToolUse: one is kept.
	d, err = Decode([]byte(`{"conversation_id":"k1","hook_event_name":"postToolUse","workspace_roots":["/w"],"tool_name":"Shell","tool_input":{"command":"npm test"},"tool_output":"`+long+`"}`), defaultPolicy(), time.Now())
	if err != nil || len(d.Entries) != 0 || len(d.Skipped) != 1 {
		t.Errorf("cursor postToolUse of Shell: %+v, %v; want it skipped", d, err)
	}
}

// TestRealAgentSessions decodes what Claude Code 2.1.332, Codex CLI 0.171.0 and Gemini
// CLI 0.61.0 sent their hooks in one scripted session each (testdata/real-agents, in
// the order sent), read as the hook agmem installs names the agent: every entry is the
// agent's, every call that failed in any form is a failed observation, and what the
// payloads carry of the prompt and the session is kept. Read with no agent named (agmem
// record by hand, a hook installed before it named it), every entry is still its own
// agent's, Codex's session events too.
func TestRealAgentSessions(t *testing.T) {
	for _, c := range []struct {
		dir, agent, source string
		calls              []string // the observations, in order; "!" before a failed one
		events             []string
	}{
		{"claude-2.1.332", "claude", SourceClaudeCode,
			[]string{"Bash", "Read", "Write", "!Bash", "!Read", "!Write"},
			[]string{"SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"}},
		// Codex's shell result carries no exit code: the failed cat is not known failed.
		// Each call is reported by PreToolUse, then answered by PostToolUse (which the
		// journal puts in its place), but the patch that failed its check.
		{"codex-0.171.0", "codex", SourceCodex,
			[]string{"Bash", "Bash", "apply_patch", "Bash", "!apply_patch"},
			[]string{"SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"}},
		{"gemini-0.61.0", "gemini", SourceGemini,
			[]string{"run_shell_command", "read_file", "write_file", "!run_shell_command", "!read_file"},
			[]string{"SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"}},
	} {
		t.Run(c.dir, func(t *testing.T) {
			files, err := filepath.Glob(filepath.Join("testdata", "real-agents", c.dir, "*.json"))
			if err != nil || len(files) == 0 {
				t.Fatalf("no payloads: %v", err)
			}
			p := defaultPolicy()
			p.Agent = c.agent
			var calls, events []string
			reports := map[string]int{} // tool_use_id -> where in calls its report is
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				d, err := Decode(data, p, time.Now())
				if err != nil {
					t.Fatalf("%s: %v", filepath.Base(f), err)
				}
				unnamed := p
				unnamed.Agent = ""
				guessed, err := Decode(data, unnamed, time.Now())
				if err != nil {
					t.Fatalf("%s, no agent named: %v", filepath.Base(f), err)
				}
				for _, e := range guessed.Entries {
					if e.Source() != c.source {
						t.Errorf("%s, no agent named: source %q, want %q", filepath.Base(f), e.Source(), c.source)
					}
				}
				for _, e := range d.Entries {
					if e.Source() != c.source {
						t.Errorf("%s: source %q, want %q", filepath.Base(f), e.Source(), c.source)
					}
					if o := e.Observation; o != nil {
						name := o.ToolName
						if o.Error != "" {
							name = "!" + name
						}
						if at, ok := reports[o.ToolUseID]; ok && !o.NoResult {
							calls[at] = name // the journal's answer to a report
							delete(reports, o.ToolUseID)
							continue
						}
						if o.NoResult {
							reports[o.ToolUseID] = len(calls)
						}
						calls = append(calls, name)
						if c.agent == "claude" && o.PromptID == "" {
							t.Errorf("%s: the call's prompt_id is lost", filepath.Base(f))
						}
					} else {
						events = append(events, e.Event.Name)
						if e.Event.Attrs["transcript_path"] == "" {
							t.Errorf("%s: the event's transcript_path is lost", filepath.Base(f))
						}
					}
				}
			}
			if !slices.Equal(calls, c.calls) {
				t.Errorf("calls %q, want %q", calls, c.calls)
			}
			if !slices.Equal(events, c.events) {
				t.Errorf("events %q, want %q", events, c.events)
			}
		})
	}
}

// TestGeminiExitCode takes a shell command's failure from the footer Gemini CLI 0.61.0
// puts after its output, and nothing else: not a line of the output, nor another tool's.
func TestGeminiExitCode(t *testing.T) {
	for _, c := range []struct {
		name, tool, llm, want string
	}{
		{"failed", "run_shell_command", "<untrusted_context>\nOutput: cat: x: No such file or directory\nExit Code: 1\nProcess Group PGID: 4850\n</untrusted_context>", "Exit Code: 1"},
		{"succeeded", "run_shell_command", "<untrusted_context>\nOutput: total 36\nProcess Group PGID: 4759\n</untrusted_context>", ""},
		{"its output says so", "run_shell_command", "<untrusted_context>\nOutput: make: step 3\nExit Code: 2\nthe retry passed\nProcess Group PGID: 1\n</untrusted_context>", ""},
		{"a signal too", "run_shell_command", "Output: (empty)\nExit Code: 130\nSignal: 2\n", "Exit Code: 130"},
		{"another tool", "read_file", "notes\nExit Code: 1\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			payload, _ := json.Marshal(map[string]any{"session_id": "g1", "hook_event_name": "AfterTool", "timestamp": "2026-12-01T20:58:25Z",
				"tool_name": c.tool, "tool_input": map[string]string{"command": "x"}, "tool_response": map[string]string{"llmContent": strings.Repeat(" ", 60) + c.llm}})
			p := defaultPolicy()
			p.Agent = "gemini"
			d, err := Decode(payload, p, time.Now())
			if err != nil || len(d.Entries) != 1 {
				t.Fatalf("Decode = %+v, %v", d, err)
			}
			if got := d.Entries[0].Observation.Error; got != c.want {
				t.Errorf("error %q, want %q", got, c.want)
			}
		})
	}
}
