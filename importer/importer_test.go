package importer

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/agmem/agmem/capture"
	"github.com/agmem/agmem/memory"
)

func read(t *testing.T, names ...string) []File {
	t.Helper()
	var paths []string
	for _, n := range names {
		paths = append(paths, filepath.Join("testdata", n))
	}
	files, err := Read(paths, capture.DefaultPolicy(), time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func ids(f File) []string {
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
	if again := read2(t); ids(again)[0] != ids(f)[0] {
		t.Error("the same transcript gives new ids")
	}
}

func read2(t *testing.T) File { return read(t, "transcript.jsonl")[0] }
