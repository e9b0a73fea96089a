package importer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/agmem/agmem/capture"
	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/lines"
	"github.com/agmem/agmem/memory"
)

// Format is a kind of file importer reads.
type Format string

const (
	PythonSession Format = "python agmem session" // .mem/daemon_session.json
	NativeJSONL   Format = "jsonl"                // native observations, hook payloads, events; the Python buffer
	Transcript    Format = "claude code transcript"
)

// File is one file to import.
type File struct {
	Path   string
	Format Format
	// NotUnderstood counts lines (or objects) that are no entry agmem knows, as Read
	// finds them.
	NotUnderstood int
	fallback      func(entryID string) string
}

// Session is the session of an entry of f's that names none: the session of a Python
// session file imported with it that holds the same observation, else that of the one
// session file given, else a session of f's own, the same at every import.
func (f *File) Session(entryID string) string { return f.fallback(entryID) }

// Item is one thing a file holds: a JSON object to decode as `agmem record` decodes its
// input (a line of JSONL, an observation of a Python session, a transcript's prompt as a
// session event), or a call a transcript's lines paired.
type Item struct {
	Object []byte
	Call   *capture.Native
	// Session is the session the file gives the item if it names none, "" for the
	// file's (File.Session).
	Session string
	// Line is where the item is: its line's number, or for a Python session's
	// observation its place in the list, from 1.
	Line int
	// Prompt says the item is a transcript's prompt, which the hooks of a session they
	// recorded recorded too, at another time (see record.Import).
	Prompt bool
}

// Progress is told how far through a file reading is.
type Progress func(path string, done, total int64)

// Open finds what each file is, by its content, and the sessions of entries that name
// none. limit bounds a line of the files.
func Open(paths []string, limit int) ([]File, error) {
	files := make([]File, len(paths))
	sessions := map[string]string{} // observation id -> session, from session files
	var sessionFiles []string       // their session ids
	for i, path := range paths {
		format, err := sniff(path, limit)
		if err != nil {
			return nil, err
		}
		files[i] = File{Path: path, Format: format}
		if format == PythonSession {
			id, ids, err := sessionOf(path)
			if err == nil {
				// Its session is given to other files' entries that name none: one it
				// would refuse is said now, not as each of their lines.
				if err = memory.CheckNewSessionID(id); err != nil {
					err = hint.With(err, memory.SessionIDHint+", in the file's \"session_id\"")
				}
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			for _, obs := range ids {
				sessions[obs] = id
			}
			sessionFiles = append(sessionFiles, id)
		}
	}
	for i := range files {
		own := fileSession(files[i].Path)
		if len(sessionFiles) == 1 {
			own = sessionFiles[0]
		}
		files[i].fallback = func(id string) string {
			if s, ok := sessions[id]; ok {
				return s
			}
			return own
		}
	}
	return files, nil
}

// fileSession is the session of the entries of a file that names none.
func fileSession(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return memory.IDOf(time.Unix(0, 0), []byte("import\x00"+abs))
}

// Read gives each item of f to each, in order; a line over limit, or one that is no
// entry agmem knows, is counted in f.NotUnderstood.
func Read(f *File, limit int, progress Progress, each func(Item) error) error {
	fh, err := os.Open(f.Path)
	if err != nil {
		return err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return err
	}
	in := &counting{r: fh, total: st.Size(), path: f.Path, progress: progress}
	switch f.Format {
	case PythonSession:
		return f.pythonSession(in, each)
	case Transcript:
		t := transcript{f: f}
		err := eachLine(in, limit, f, func(line []byte, n int) error {
			for _, it := range t.line(line) {
				it.Line = n
				if err := each(it); err != nil {
					return err
				}
			}
			return nil
		})
		f.NotUnderstood += len(t.calls) // calls no result answered
		return err
	default:
		return eachLine(in, limit, f, func(line []byte, n int) error { return each(Item{Object: line, Line: n}) })
	}
}

// eachLine calls fn with each line that is not blank; a line over limit is counted as
// not understood.
func eachLine(in io.Reader, limit int, f *File, fn func(line []byte, n int) error) error {
	r := lines.NewReader(in, limit, 1<<20, 0)
	for {
		l, err := r.Next()
		switch {
		case l.Long:
			f.NotUnderstood++
		case len(bytes.TrimSpace(l.Text)) > 0:
			if err := fn(l.Text, l.N); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// sniff tells a file's format from its content: one JSON object with a "session_id"
// and an "observations" list is a Python session; lines with a "type" and no
// "tool_name" or "hook_event_name", the first with a "sessionId" or a "message", are a
// transcript; anything else is JSONL.
func sniff(path string, limit int) (Format, error) {
	fh, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	if st, err := fh.Stat(); err == nil && st.IsDir() {
		return "", fmt.Errorf("%s is a directory", path)
	}
	if topHolds(bufio.NewReaderSize(fh, 1<<20), "session_id", "observations") {
		return PythonSession, nil
	}
	if _, err := fh.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	if topHolds(bufio.NewReaderSize(fh, 1<<20), "sessionId", "messages") {
		return "", fmt.Errorf("%s is a Gemini CLI session, which agmem does not import: %s", path, hooksFromNow)
	}
	if _, err := fh.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	r := lines.NewReader(fh, limit, 1<<20, 0)
	meta := false // a transcript's line of its own (a summary, a snapshot of files)
	for n := 0; n < 8; {
		l, err := r.Next()
		if len(bytes.TrimSpace(l.Text)) > 0 || l.Long {
			n++
			var probe struct {
				Type      *string         `json:"type"`
				SessionID json.RawMessage `json:"sessionId"`
				Message   json.RawMessage `json:"message"`
				ToolName  json.RawMessage `json:"tool_name"`
				HookEvent json.RawMessage `json:"hook_event_name"`
				Payload   json.RawMessage `json:"payload"`
			}
			if !l.Long && json.Unmarshal(l.Text, &probe) == nil {
				if probe.Type == nil || probe.ToolName != nil || probe.HookEvent != nil {
					return NativeJSONL, nil
				}
				if probe.Payload != nil && slices.Contains(codexRolloutTypes, *probe.Type) {
					return "", fmt.Errorf("%s is a Codex rollout, which agmem does not import: %s", path, hooksFromNow)
				}
				if probe.SessionID != nil || probe.Message != nil {
					return Transcript, nil
				}
				meta = true // look further
			}
		}
		if err != nil {
			break
		}
	}
	if meta { // only a transcript's own lines at its start: a resumed or compacted session
		return Transcript, nil
	}
	return NativeJSONL, nil
}

// codexRolloutTypes are the types of a Codex rollout's lines, each with a "payload".
var codexRolloutTypes = []string{"session_meta", "response_item", "event_msg", "turn_context", "compacted"}

// hooksFromNow is what to do of a history agmem does not import.
const hooksFromNow = "its hooks record that agent's calls from when they are installed (agmem hooks install)"

// topHolds says whether the first JSON value read is an object that holds, at its top,
// each of names (a Python agmem session's "session_id" and "observations"); it reads
// only the names and skips the values, however large.
func topHolds(r io.Reader, names ...string) bool {
	dec := json.NewDecoder(r)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if name, ok := tok.(string); ok && slices.Contains(names, name) {
			if seen[name] = true; len(seen) == len(names) {
				return true
			}
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return false
}

// counting tells progress how much of the file has been read.
type counting struct {
	r        io.Reader
	done     int64
	total    int64
	path     string
	progress Progress
}

func (c *counting) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.done += int64(n)
	if c.progress != nil {
		c.progress(c.path, c.done, c.total)
	}
	return n, err
}
