package importer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/agmem/agmem/capture"
	"github.com/agmem/agmem/memory"
)

// Format is a kind of file importer reads.
type Format string

const (
	PythonSession Format = "python agmem session" // .mem/daemon_session.json
	NativeJSONL   Format = "jsonl"                // native observations, hook payloads, events; the Python buffer
	Transcript    Format = "claude code transcript"
)

// File is what one file held.
type File struct {
	Path    string
	Format  Format
	Entries []memory.Entry
	// NotCaptured counts calls the capture rules leave out (ignored tools, short results).
	NotCaptured int
	// NotUnderstood counts lines (or objects) that are no entry agmem knows.
	NotUnderstood int
}

// Progress is told how far through a file reading is.
type Progress func(path string, done, total int64)

// Read reads the files, each by its content. A Python session file read with buffer
// files gives its session id to their observations that name none.
func Read(paths []string, p capture.Policy, now time.Time, progress Progress) ([]File, error) {
	files := make([]File, len(paths))
	sessions := map[string]string{} // observation id -> session, from session files
	var only string                 // the one session file's session id
	nSessions := 0
	for i, path := range paths {
		f, err := readFile(path, p, now, progress)
		if err != nil {
			return nil, err
		}
		if f.Format == PythonSession {
			for _, e := range f.Entries {
				sessions[e.ID()] = e.Session()
				only = e.Session()
			}
			nSessions++
		}
		files[i] = f
	}
	for _, f := range files {
		if f.Format != NativeJSONL {
			continue
		}
		for _, e := range f.Entries {
			if e.Session() != "" {
				continue
			}
			if s, ok := sessions[e.ID()]; ok {
				e.SetSession(s)
			} else if nSessions == 1 {
				e.SetSession(only)
			}
		}
	}
	return files, nil
}

func readFile(path string, p capture.Policy, now time.Time, progress Progress) (File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return File{}, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return File{}, err
	}
	if st.IsDir() {
		return File{}, fmt.Errorf("%s is a directory", path)
	}
	r := &counting{r: fh, total: st.Size(), path: path, progress: progress}
	br := bufio.NewReaderSize(r, 1<<20)
	head, _ := br.Peek(64 << 10)
	f := File{Path: path, Format: sniff(head)}
	switch f.Format {
	case PythonSession:
		err = readPythonSession(br, p, now, &f)
	case Transcript:
		err = readTranscript(br, p, now, &f)
	default:
		err = eachLine(br, func(line []byte) { f.add(decodeLine(line, p, now)) })
	}
	if err != nil {
		return File{}, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// sniff tells a file's format from its first bytes: one JSON object with a
// "session_id" and an "observations" list is a Python session; lines with a "type"
// and no "tool_name" or "hook_event_name", the first with a "sessionId" or a "message",
// are a transcript; anything else is JSONL.
func sniff(head []byte) Format {
	var session struct {
		SessionID    *string           `json:"session_id"`
		Observations []json.RawMessage `json:"observations"`
	}
	dec := json.NewDecoder(bytes.NewReader(head))
	if dec.Decode(&session) == nil && session.SessionID != nil && session.Observations != nil {
		return PythonSession
	}
	for _, line := range bytes.Split(head, []byte("\n")) {
		var probe struct {
			Type      *string         `json:"type"`
			SessionID json.RawMessage `json:"sessionId"`
			Message   json.RawMessage `json:"message"`
			ToolName  json.RawMessage `json:"tool_name"`
			HookEvent json.RawMessage `json:"hook_event_name"`
		}
		if json.Unmarshal(line, &probe) != nil {
			continue
		}
		if probe.Type == nil || probe.ToolName != nil || probe.HookEvent != nil {
			return NativeJSONL
		}
		if probe.SessionID != nil || probe.Message != nil {
			return Transcript
		}
		// a transcript's summary line: look further
	}
	return NativeJSONL
}

// decoded is what one line or object became.
type decoded struct {
	capture.Decoded
	err error
}

// decodeLine reads a line as agmem record --jsonl does. An entry the line gives no id
// gets one from the line itself.
func decodeLine(line []byte, p capture.Policy, now time.Time) decoded {
	d, err := capture.Decode(line, p, now)
	if err == nil && !has(line, "id") {
		identify(d, line, has(line, "timestamp"))
	}
	return decoded{d, err}
}

// identify gives the entries decoded from content ids derived from it: from their
// time too when the content dates them, and from the content alone when their time is
// only when it was read.
func identify(d capture.Decoded, content []byte, dated bool) {
	for i, e := range d.Entries {
		t := time.Unix(0, 0)
		if dated {
			t = e.Time()
		}
		e.SetID(memory.IDOf(t, append(content[:len(content):len(content)], byte(i))))
	}
}

// has says whether a JSON object has a non-empty member key.
func has(object []byte, key string) bool {
	var members map[string]json.RawMessage
	if json.Unmarshal(object, &members) != nil {
		return false
	}
	v := members[key]
	return len(v) > 0 && string(v) != `""` && string(v) != "null"
}

func (f *File) add(d decoded) {
	if d.err != nil {
		f.NotUnderstood++
		return
	}
	f.Entries = append(f.Entries, d.Entries...)
	f.NotCaptured += len(d.Skipped)
}

// eachLine calls fn with each non-blank line.
func eachLine(br *bufio.Reader, fn func([]byte)) error {
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			fn(line)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
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
