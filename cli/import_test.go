package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestImportTwice imports the Python agmem's state, native JSONL and a Claude Code
// transcript, then the same files again: the second import adds only the one line that
// has neither an id nor a time (the id rule makes such a call new each time it comes),
// and a flush commits each session once.
func TestImportTwice(t *testing.T) {
	dir := t.TempDir()
	mustAgmem(t, dir, "", "init")
	var files []string
	for _, f := range []string{"daemon_buffer.jsonl", "daemon_session.json", "native.jsonl", "transcript.jsonl"} {
		abs, _ := filepath.Abs(filepath.Join("..", "capture", "importer", "testdata", f))
		files = append(files, abs)
	}
	first := mustAgmem(t, dir, "", append([]string{"import"}, files...)...)
	for _, want := range []string{
		"daemon_buffer.jsonl (jsonl): 2 imported, 0 duplicates, 0 not understood, 0 not captured",
		"daemon_session.json (python agmem session): 1 imported, 1 duplicates",
		"native.jsonl (jsonl): 3 imported, 0 duplicates, 1 not understood, 1 not captured",
		"transcript.jsonl (claude code transcript): 3 imported, 0 duplicates, 3 not understood",
		"total: 9 imported, 1 duplicates, 4 not understood, 1 not captured",
	} {
		if !strings.Contains(first, want) {
			t.Errorf("first import does not say %q:\n%s", want, first)
		}
	}
	second := mustAgmem(t, dir, "", append([]string{"import"}, files...)...)
	if !strings.Contains(second, "native.jsonl (jsonl): 1 imported, 2 duplicates") ||
		!strings.Contains(second, "total: 1 imported, 9 duplicates") {
		t.Errorf("second import added more than the line without id or time:\n%s", second)
	}
	mustAgmem(t, dir, "", "flush")
	checkRepoSettled(t, dir)
	sessions := mustAgmem(t, dir, "", "sessions")
	for _, s := range []string{"py-session-7", "native-demo", "cc-session-1"} {
		if !strings.Contains(sessions, s) {
			t.Errorf("sessions does not list %s:\n%s", s, sessions)
		}
	}
	replay := mustAgmem(t, dir, "", "replay", "--session", "cc-session-1", "--events")
	if !strings.Contains(replay, "Bash") || !strings.Contains(replay, "Read") || !strings.Contains(replay, "the store test is flaky, fix it") {
		t.Errorf("replay of the transcript's session, its prompt among its events:\n%s", replay)
	}
	inMarkdown, _, total := committed(t, dir)
	if len(inMarkdown) != 8 || total != 8 {
		t.Errorf("committed %d observations in files, trailers say %d; want 8", len(inMarkdown), total)
	}
}

// TestImportRefusesAnUnprintableSession: a Python agmem session file whose session id
// agmem refuses given any other way (white space at its ends here) is refused, saying
// why, and nothing is imported, of it or of a file beside it whose lines it would give
// its session.
func TestImportRefusesAnUnprintableSession(t *testing.T) {
	dir := t.TempDir()
	mustAgmem(t, dir, "", "init")
	data, err := os.ReadFile(filepath.Join("..", "capture", "importer", "testdata", "daemon_session.json"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "daemon_session.json")
	if err := os.WriteFile(file, bytes.Replace(data, []byte(`"py-session-7"`), []byte(`" py-session-7 "`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	calls := filepath.Join(dir, "calls.jsonl")
	if err := os.WriteFile(calls, []byte(`{"tool_name":"Bash","arguments":{"command":"make"},"result":"built every package of the module without a warning"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := agmem(t, dir, nil, "", "import", file, calls)
	if err == nil || !strings.Contains(err.Error(), `daemon_session.json: session id " py-session-7 " starts or ends with white space`) ||
		!strings.Contains(err.Error(), `hint: pass a session id of visible characters`) {
		t.Errorf("import: %v\n%s", err, out)
	}
	if status := mustAgmem(t, dir, "", "status"); !strings.Contains(status, "pending:  0 observations") {
		t.Errorf("something was imported:\n%s", status)
	}
}

// TestImportOfNothingUnderstood: a file of which nothing is understood, or an agent's
// history agmem does not import (a Codex rollout), fails, saying so, where it said
// "0 imported" and exited 0.
func TestImportOfNothingUnderstood(t *testing.T) {
	dir := t.TempDir()
	mustAgmem(t, dir, "", "init")
	files := map[string]string{
		"rollout.jsonl": `{"timestamp":"2026-12-01T20:58:12Z","type":"session_meta","payload":{"id":"01a2","cwd":"/w"}}` + "\n",
		"notes.jsonl":   "not JSON\nnor this\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{"rollout.jsonl": "is a Codex rollout, which agmem does not import",
		"notes.jsonl": "nothing imported: nothing in what was given was understood"} {
		if out, err := agmem(t, dir, nil, "", "import", name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("import %s: %v\n%s", name, err, out)
		}
	}
}

// TestImportOfAHookedSession: a transcript of a session the hooks recorded brings none
// of its prompts again (the hook's is dated when it came, the transcript's as its line,
// a moment apart); another session of the same import, which no hook saw, brings its
// prompt; and importing the transcript again once the session went on brings its new
// prompt, once.
func TestImportOfAHookedSession(t *testing.T) {
	dir := t.TempDir()
	mustAgmem(t, dir, "", "init")
	hook := func(fields string) string {
		return `{"session_id":"hooked-1","cwd":"/work/app",` + fields + `}`
	}
	mustAgmem(t, dir, hook(`"hook_event_name":"UserPromptSubmit","prompt":"list the files please"`), "record")
	mustAgmem(t, dir, hook(`"hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"toolu_h1","tool_input":{"command":"ls -la"},`+
		`"tool_response":"total 36 and a listing of every file in the project, long enough to keep"`), "record")
	now := time.Now().UTC()
	turn := func(session, id, prompt string, at time.Time) string {
		line := func(typ string, at time.Time, message string) string {
			return `{"type":"` + typ + `","sessionId":"` + session + `","cwd":"/work/app","timestamp":"` + at.Format(time.RFC3339Nano) + `","message":` + message + `}` + "\n"
		}
		return line("user", at, `{"role":"user","content":"`+prompt+`"}`) +
			line("assistant", at.Add(time.Second), `{"content":[{"type":"tool_use","id":"`+id+`","name":"Bash","input":{"command":"ls -la"}}]}`) +
			line("user", at.Add(2*time.Second), `{"content":[{"type":"tool_result","tool_use_id":"`+id+`","content":"total 36 and a listing of every file in the project, long enough to keep"}]}`)
	}
	transcript := turn("hooked-1", "toolu_h1", "list the files please", now) + turn("unhooked-2", "toolu_u2", "list the files please", now)
	path := filepath.Join(dir, "t.jsonl")
	if err := os.WriteFile(path, []byte(transcript), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := mustAgmem(t, dir, "", "import", path); !strings.Contains(out, "2 imported, 2 duplicates") {
		t.Errorf("import of a hooked session and another:\n%s", out)
	}
	transcript += turn("unhooked-2", "toolu_u3", "now read the notes", now.Add(5*time.Minute))
	if err := os.WriteFile(path, []byte(transcript), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := mustAgmem(t, dir, "", "import", path); !strings.Contains(out, "2 imported, 4 duplicates") {
		t.Errorf("import of the transcript gone on:\n%s", out)
	}
	for session, prompts := range map[string][]string{"hooked-1": {"list the files please"}, "unhooked-2": {"list the files please", "now read the notes"}} {
		replay := mustAgmem(t, dir, "", "replay", "--session", session, "--events", "--json")
		for _, p := range prompts {
			if got := strings.Count(replay, p); got != 1 {
				t.Errorf("session %s holds prompt %q %d times, want once:\n%s", session, p, got, replay)
			}
		}
	}
}
