package importer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agmem/agmem/memory"
)

// read is a file opened and read, and the items it gave.
type read struct {
	File
	Items []Item
}

// readFiles opens and reads files from dir by their names.
func readFiles(t *testing.T, dir string, names ...string) []read {
	t.Helper()
	var paths []string
	for _, n := range names {
		paths = append(paths, filepath.Join(dir, n))
	}
	files, err := Open(paths, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var out []read
	for i := range files {
		var items []Item
		if err := Read(&files[i], 1<<20, nil, func(it Item) error { items = append(items, it); return nil }); err != nil {
			t.Fatal(err)
		}
		out = append(out, read{files[i], items})
	}
	return out
}

// idOf is the id an item's object gives, "" for none.
func idOf(t *testing.T, it Item) string {
	t.Helper()
	var o struct{ ID string }
	if err := json.Unmarshal(it.Object, &o); err != nil {
		t.Fatal(err)
	}
	id, _ := memory.NormalizeID(o.ID)
	return id
}

func TestPythonStateTogether(t *testing.T) {
	files := readFiles(t, "testdata", "daemon_buffer.jsonl", "daemon_session.json")
	buffer, session := files[0], files[1]
	if buffer.Format != NativeJSONL || session.Format != PythonSession {
		t.Fatalf("formats %q and %q", buffer.Format, session.Format)
	}
	if len(session.Items) != 2 || len(buffer.Items) != 2 {
		t.Fatalf("%d session and %d buffer items, want 2 and 2", len(session.Items), len(buffer.Items))
	}
	for _, it := range session.Items {
		if it.Session != "py-session-7" {
			t.Errorf("line %d of the session file is in session %q, want the file's", it.Line, it.Session)
		}
	}
	// The buffer's lines name no session: the one of the session file that holds the
	// same observation, else the one session file's.
	for _, it := range buffer.Items {
		if got := buffer.Session(idOf(t, it)); it.Session != "" || got != "py-session-7" {
			t.Errorf("buffer line %d is in session %q (%q), want the session file's", it.Line, got, it.Session)
		}
	}
}

func TestNativeJSONLIsReadAsLines(t *testing.T) {
	f := readFiles(t, "testdata", "native.jsonl")[0]
	if f.Format != NativeJSONL || len(f.Items) != 5 || f.NotUnderstood != 0 {
		t.Fatalf("%s: %d items, %d not understood; want jsonl, every line, none", f.Format, len(f.Items), f.NotUnderstood)
	}
	if f.Items[4].Line != 5 || !strings.HasPrefix(string(f.Items[4].Object), "this line is not JSON") {
		t.Errorf("last item: line %d, %q", f.Items[4].Line, f.Items[4].Object)
	}
}

func TestTranscript(t *testing.T) {
	f := readFiles(t, "testdata", "transcript.jsonl")[0]
	if f.Format != Transcript {
		t.Fatalf("format %q", f.Format)
	}
	// the prompt and two answered calls; not understood: an unknown type, a broken
	// line, an unanswered call
	if len(f.Items) != 3 || f.NotUnderstood != 3 {
		t.Fatalf("%d items, %d not understood; want 3 and 3", len(f.Items), f.NotUnderstood)
	}
	if got := string(f.Items[0].Object); got != `{"attrs":{"cwd":"/home/ana/app"},"event":"UserPromptSubmit","session_id":"cc-session-1",`+
		`"source":"claude-code","text":"the store test is flaky, fix it","timestamp":"2025-05-01T08:00:00.000Z"}` {
		t.Errorf("the prompt: %s", got)
	}
	bash, read := f.Items[1].Call, f.Items[2].Call
	if *bash.ToolName != "Bash" || bash.ToolUseID != "toolu_01A" || bash.SessionID != "cc-session-1" || bash.Cwd != "/home/ana/app" {
		t.Errorf("bash call: %+v", bash)
	}
	if bash.Timestamp != "2025-05-01T08:00:05.000Z" {
		t.Errorf("the call is dated %s, want the tool_use's time", bash.Timestamp)
	}
	if len(bash.Result) == 0 || bash.Result[0] != '{' {
		t.Errorf("the result is not the toolUseResult object: %s", bash.Result)
	}
	if read.Error != "File does not exist." {
		t.Errorf("a result with is_error is not a failed call: %+v", read)
	}
}

// A transcript of a resumed or compacted session may start with more summaries and
// snapshots of files than the lines a format is told by: it is a transcript still.
func TestTranscriptStartingWithItsOwnLines(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "transcript.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	own := strings.Repeat(`{"type":"summary","summary":"Fix the flaky test","leafUuid":"u0"}`+"\n", 6) +
		strings.Repeat(`{"type":"file-history-snapshot","messageId":"m1","snapshot":{"trackedFileBackups":{}}}`+"\n", 6)
	os.WriteFile(filepath.Join(dir, "resumed.jsonl"), append([]byte(own), data...), 0o644)
	f := readFiles(t, dir, "resumed.jsonl")[0]
	if f.Format != Transcript || len(f.Items) != 3 {
		t.Errorf("%s, %d items; want a transcript of 3", f.Format, len(f.Items))
	}
}

// What the person typed is a prompt: text, or blocks of text and images; not what
// Claude Code wrote itself (isMeta, a slash command it ran, a command's output, an
// interruption), a subagent's prompt, a compacted session's summary, or a line without
// a time, which would be a new entry at each import.
func TestTranscriptPrompts(t *testing.T) {
	dir := t.TempDir()
	line := func(extra, content string) string {
		return `{"type":"user","sessionId":"s","timestamp":"2025-05-01T08:00:00Z"` + extra + `,"message":{"role":"user","content":` + content + `}}` + "\n"
	}
	transcript := line("", `"first"`) +
		line("", `[{"type":"text","text":"look at"},{"type":"image","source":{}},{"type":"text","text":"this"}]`) +
		line(`,"isMeta":true`, `"Caveat: the messages below were generated by the user while running local commands"`) +
		line(`,"isSidechain":true`, `"the subagent's task"`) +
		line(`,"isCompactSummary":true`, `"This session is being continued"`) +
		line("", `"   "`) +
		line("", `[{"type":"tool_result","tool_use_id":"t0","content":"x"}]`) +
		line("", `"<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args>opus</command-args>"`) +
		line("", `"<local-command-stdout>Set model to opus</local-command-stdout>"`) +
		line("", `[{"type":"text","text":"[Request interrupted by user]"}]`) +
		line("", `"<bash-input>ls</bash-input>"`) +
		`{"type":"user","sessionId":"s","message":{"role":"user","content":"no time"}}` + "\n"
	os.WriteFile(filepath.Join(dir, "t.jsonl"), []byte(transcript), 0o644)
	f := readFiles(t, dir, "t.jsonl")[0]
	var got []string
	for _, it := range f.Items {
		var e struct{ Event, Text string }
		json.Unmarshal(it.Object, &e)
		got = append(got, e.Event+": "+e.Text)
	}
	if want := []string{"UserPromptSubmit: first", "UserPromptSubmit: look at\nthis"}; !slices.Equal(got, want) {
		t.Errorf("prompts %q, want %q", got, want)
	}
}

func TestLargeFilesKeepTheirFormat(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("a line of a long result ", 4000) // ~96 KiB
	session := `{"session_id": "big-session", "started_at": "2025-03-01T09:00:00", "observations": [` +
		`{"id": "5f0c3a52-1b2d-4e8f-9a6b-7c8d9e0f1a2b", "tool_name": "read_file", "arguments": {}, "result": "` + big + `"}]}`
	os.WriteFile(filepath.Join(dir, "session.json"), []byte(session), 0o644)
	transcript := `{"type":"user","sessionId":"s","message":{"role":"user","content":"` + big + `"}}` + "\n" +
		`{"type":"assistant","sessionId":"s","timestamp":"2025-05-01T08:00:05Z","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]}}` + "\n" +
		`{"type":"user","sessionId":"s","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"` + strings.Repeat("file ", 20) + `"}]}}` + "\n"
	os.WriteFile(filepath.Join(dir, "transcript.jsonl"), []byte(transcript), 0o644)
	files := readFiles(t, dir, "session.json", "transcript.jsonl")
	if files[0].Format != PythonSession || len(files[0].Items) != 1 {
		t.Errorf("a session file over 64 KiB: %s, %d items", files[0].Format, len(files[0].Items))
	}
	if files[1].Format != Transcript || len(files[1].Items) != 1 {
		t.Errorf("a transcript whose first line is over 64 KiB: %s, %d items", files[1].Format, len(files[1].Items))
	}
}

// A line over the bound is read past, and counted as not understood.
func TestLongLine(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "calls.jsonl"), []byte(`{"tool_name":"a"}`+"\n"+
		`{"tool_name":"`+strings.Repeat("b", 100)+`"}`+"\n"+`{"tool_name":"c"}`+"\n"), 0o644)
	files, err := Open([]string{filepath.Join(dir, "calls.jsonl")}, 64)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	if err := Read(&files[0], 64, nil, func(it Item) error { got = append(got, it.Line); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != 1 || got[1] != 3 || files[0].NotUnderstood != 1 {
		t.Errorf("lines %v, %d not understood; want 1 and 3, and 1", got, files[0].NotUnderstood)
	}
}

// TestHistoriesNotImported: a Codex rollout and a Gemini CLI session are named as what
// they are, and refused, rather than read as a transcript or lines of nothing.
func TestHistoriesNotImported(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"rollout.jsonl": `{"timestamp":"2026-12-01T20:58:12Z","type":"session_meta","payload":{"id":"01a2","cwd":"/w"}}` + "\n" +
			`{"timestamp":"2026-12-01T20:58:13Z","type":"response_item","payload":{"type":"function_call","name":"shell"}}` + "\n",
		"session-1.json": "{\n  \"sessionId\": \"g1\",\n  \"projectHash\": \"x\",\n  \"messages\": [{\"type\": \"user\", \"content\": \"hi\"}]\n}\n",
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"rollout.jsonl": "is a Codex rollout", "session-1.json": "is a Gemini CLI session"}[name]
		if _, err := Open([]string{path}, 1<<20); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error that it %s", name, err, want)
		}
	}
}
