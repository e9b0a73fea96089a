package importer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agmem/agmem/capture"
	"github.com/agmem/agmem/internal/config"
	"github.com/agmem/agmem/memory"
)

// imported is a file read and the entries it gave.
type imported struct {
	File
	Entries []memory.Entry
}

func read(t *testing.T, names ...string) []imported {
	t.Helper()
	return importFiles(t, "testdata", names...)
}

func ids(f imported) []string {
	var out []string
	for _, e := range f.Entries {
		out = append(out, e.ID())
	}
	return out
}

func TestPythonStateTogether(t *testing.T) {
	files := read(t, "daemon_buffer.jsonl", "daemon_session.json")
	buffer, session := files[0], files[1]
	if buffer.Format != NativeJSONL || session.Format != PythonSession {
		t.Fatalf("formats %q and %q", buffer.Format, session.Format)
	}
	if len(session.Entries) != 2 || len(buffer.Entries) != 2 {
		t.Fatalf("%d session and %d buffer entries, want 2 and 2", len(session.Entries), len(buffer.Entries))
	}
	for _, e := range append(session.Entries, buffer.Entries...) {
		if e.Session() != "py-session-7" {
			t.Errorf("%s is in session %q, want the session file's", e.ID(), e.Session())
		}
	}
	// The observation in both files has one id: the journal keeps it once.
	if session.Entries[1].ID() != buffer.Entries[0].ID() {
		t.Errorf("the shared observation has ids %s and %s", session.Entries[1].ID(), buffer.Entries[0].ID())
	}
}

func TestNativeJSONL(t *testing.T) {
	f := read(t, "native.jsonl")[0]
	if len(f.Entries) != 3 || f.NotCaptured != 1 || f.NotUnderstood != 1 {
		t.Fatalf("%d entries, %d not captured, %d not understood; want 3, 1, 1", len(f.Entries), f.NotCaptured, f.NotUnderstood)
	}
	if again := read(t, "native.jsonl")[0]; ids(again)[1] != ids(f)[1] {
		t.Errorf("a line without id or timestamp gets a new id each time: %s, %s", ids(f)[1], ids(again)[1])
	}
}

func TestTranscript(t *testing.T) {
	f := read(t, "transcript.jsonl")[0]
	if f.Format != Transcript {
		t.Fatalf("format %q", f.Format)
	}
	// two answered calls; not understood: an unknown type, a broken line, an unanswered call
	if len(f.Entries) != 2 || f.NotUnderstood != 3 {
		t.Fatalf("%d entries, %d not understood; want 2 and 3", len(f.Entries), f.NotUnderstood)
	}
	bash, read := f.Entries[0].Observation, f.Entries[1].Observation
	if bash.ToolName != "Bash" || bash.ToolUseID != "toolu_01A" || bash.SessionID != "cc-session-1" || bash.Cwd != "/home/ana/app" {
		t.Errorf("bash call: %+v", bash)
	}
	if got := bash.Timestamp.Format(time.RFC3339); got != "2025-05-01T08:00:05Z" {
		t.Errorf("the call is dated %s, want the tool_use's time", got)
	}
	if string(bash.Result) == "" || bash.Result[0] != '{' {
		t.Errorf("the result is not the toolUseResult object: %s", bash.Result)
	}
	if read.Error != "File does not exist." || read.MemoryType != memory.Semantic {
		t.Errorf("a result with is_error is not a failed call: %+v", read)
	}
	if again := importFiles(t, "testdata", "transcript.jsonl")[0]; ids(again)[0] != ids(f)[0] {
		t.Error("the same transcript gives new ids")
	}
}

// importFiles imports files from dir by their names.
func importFiles(t *testing.T, dir string, names ...string) []imported {
	t.Helper()
	var paths []string
	for _, n := range names {
		paths = append(paths, filepath.Join(dir, n))
	}
	got := map[string][]memory.Entry{}
	files, err := Import(paths, policy(t), time.Now(), nil, func(f *File, entries []memory.Entry) error {
		got[f.Path] = append(got[f.Path], entries...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []imported
	for _, f := range files {
		out = append(out, imported{f, got[f.Path]})
	}
	return out
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
	files := importFiles(t, dir, "session.json", "transcript.jsonl")
	if files[0].Format != PythonSession || len(files[0].Entries) != 1 {
		t.Errorf("a session file over 64 KiB: %s, %d entries", files[0].Format, len(files[0].Entries))
	}
	if files[1].Format != Transcript || len(files[1].Entries) != 1 {
		t.Errorf("a transcript whose first line is over 64 KiB: %s, %d entries", files[1].Format, len(files[1].Entries))
	}
}

func TestLineEndsMakeNoNewIDs(t *testing.T) {
	dir := t.TempDir()
	line := `{"tool_name": "search", "arguments": {"q": "x"}, "result": "` + strings.Repeat("r", 60) + `"}`
	os.WriteFile(filepath.Join(dir, "lf.jsonl"), []byte(line+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "crlf.jsonl"), []byte(line+"\r\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "none.jsonl"), []byte(line), 0o644)
	os.WriteFile(filepath.Join(dir, "spaced.jsonl"), []byte(strings.ReplaceAll(line, ": ", ":")+"\n"), 0o644)
	var first string
	for _, name := range []string{"lf.jsonl", "crlf.jsonl", "none.jsonl", "spaced.jsonl"} {
		f := importFiles(t, dir, name)[0]
		if len(f.Entries) != 1 {
			t.Fatalf("%s: %d entries", name, len(f.Entries))
		}
		if first == "" {
			first = f.Entries[0].ID()
		} else if f.Entries[0].ID() != first {
			t.Errorf("%s gives id %s, lf.jsonl %s", name, f.Entries[0].ID(), first)
		}
		if f.Entries[0].Session() == "" {
			t.Errorf("%s: an entry without a session", name)
		}
	}
}

// policy is the capture policy of the built-in configuration.
func policy(t *testing.T) capture.Policy {
	t.Helper()
	p, err := config.Default().Policy()
	if err != nil {
		t.Fatal(err)
	}
	return p
}
