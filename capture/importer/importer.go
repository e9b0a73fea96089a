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
	Path   string
	Format Format
	// Read counts the entries read from the file and given to the sink.
	Read int
	// NotCaptured counts calls the capture rules leave out (ignored tools, short results).
	NotCaptured int
	// NotUnderstood counts lines (or objects) that are no entry agmem knows.
	NotUnderstood int
}

// Sink takes the entries read from a file, a chunk at a time, each in a session.
type Sink func(f *File, entries []memory.Entry) error

// Progress is told how far through a file reading is.
type Progress func(path string, done, total int64)

// Chunks are at most this many entries, or about this many bytes of input: an import
// never holds the journal long, and never holds a whole file in memory.
const (
	chunkEntries = 1000
	chunkBytes   = 1 << 20
)

// maxLine bounds one line of a JSONL file or a transcript.
const maxLine = 64 << 20

// Import reads the files, each by its content, and gives their entries to sink. An
// entry that names no session takes the session of a Python session file imported with
// it that holds the same observation, else that of the one session file given, else a
// session of its own file's, the same at every import.
func Import(paths []string, p capture.Policy, now time.Time, progress Progress, sink Sink) ([]File, error) {
	files := make([]File, len(paths))
	sessions := map[string]string{} // observation id -> session, from session files
	var sessionFiles []string       // their session ids
	for i, path := range paths {
		format, err := sniff(path)
		if err != nil {
			return nil, err
		}
		files[i] = File{Path: path, Format: format}
		if format == PythonSession {
			id, ids, err := sessionOf(path)
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
		f := &files[i]
		fallback := fileSession(f.Path)
		if len(sessionFiles) == 1 {
			fallback = sessionFiles[0]
		}
		r := &reader{f: f, p: p, now: now, sink: sink, session: func(e memory.Entry) string {
			if s, ok := sessions[e.ID()]; ok {
				return s
			}
			return fallback
		}}
		if err := r.read(progress); err != nil {
			return files, fmt.Errorf("%s: %w", f.Path, err)
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

// reader reads one file and gives its entries to the sink in chunks.
type reader struct {
	f       *File
	p       capture.Policy
	now     time.Time
	sink    Sink
	session func(memory.Entry) string

	chunk []memory.Entry
	bytes int
	err   error
}

func (r *reader) read(progress Progress) error {
	fh, err := os.Open(r.f.Path)
	if err != nil {
		return err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return err
	}
	br := bufio.NewReaderSize(&counting{r: fh, total: st.Size(), path: r.f.Path, progress: progress}, 1<<20)
	switch r.f.Format {
	case PythonSession:
		err = r.pythonSession(br)
	case Transcript:
		err = r.transcript(br)
	default:
		err = eachLine(br, func(line []byte) { r.add(decodeLine(line, r.p, r.now), len(line)) })
	}
	if err == nil {
		r.flush()
	}
	if r.err != nil {
		return r.err
	}
	return err
}

// add takes what a line or an object became, size bytes of input.
func (r *reader) add(d decoded, size int) {
	if d.err != nil {
		r.f.NotUnderstood++
		return
	}
	r.f.NotCaptured += len(d.Skipped)
	for _, e := range d.Entries {
		if e.Session() == "" {
			e.SetSession(r.session(e))
		}
	}
	r.chunk = append(r.chunk, d.Entries...)
	r.bytes += size
	if len(r.chunk) >= chunkEntries || r.bytes >= chunkBytes {
		r.flush()
	}
}

func (r *reader) flush() {
	if len(r.chunk) == 0 || r.err != nil {
		return
	}
	r.f.Read += len(r.chunk)
	r.err = r.sink(r.f, r.chunk)
	r.chunk, r.bytes = nil, 0
}

// sniff tells a file's format from its content: one JSON object with a "session_id"
// and an "observations" list is a Python session; lines with a "type" and no
// "tool_name" or "hook_event_name", the first with a "sessionId" or a "message", are a
// transcript; anything else is JSONL.
func sniff(path string) (Format, error) {
	fh, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	if st, err := fh.Stat(); err == nil && st.IsDir() {
		return "", fmt.Errorf("%s is a directory", path)
	}
	br := bufio.NewReaderSize(fh, 1<<20)
	if isPythonSession(br) {
		return PythonSession, nil
	}
	if _, err := fh.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	br.Reset(fh)
	for n := 0; n < 8; {
		line, long, err := readLine(br)
		if len(bytes.TrimSpace(line)) > 0 || long {
			n++
			var probe struct {
				Type      *string         `json:"type"`
				SessionID json.RawMessage `json:"sessionId"`
				Message   json.RawMessage `json:"message"`
				ToolName  json.RawMessage `json:"tool_name"`
				HookEvent json.RawMessage `json:"hook_event_name"`
			}
			if !long && json.Unmarshal(line, &probe) == nil {
				if probe.Type == nil || probe.ToolName != nil || probe.HookEvent != nil {
					return NativeJSONL, nil
				}
				if probe.SessionID != nil || probe.Message != nil {
					return Transcript, nil
				}
				// a transcript's summary line: look further
			}
		}
		if err != nil {
			break
		}
	}
	return NativeJSONL, nil
}

// isPythonSession says whether the first JSON value read holds, at its top, the
// "session_id" and "observations" of a Python agmem session; it reads only the names
// and skips the values, however large.
func isPythonSession(r io.Reader) bool {
	dec := json.NewDecoder(r)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	var session, observations bool
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case "session_id":
			session = true
		case "observations":
			observations = true
		}
		if session && observations {
			return true
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return false
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
	if err == nil && !capture.HasMember(line, "id") {
		d.IdentifyBy(line, capture.HasMember(line, "timestamp"))
	}
	return decoded{d, err}
}

// eachLine calls fn with each non-blank line; a line over maxLine is skipped whole.
func eachLine(br *bufio.Reader, fn func([]byte)) error {
	for {
		line, long, err := readLine(br)
		if !long && len(bytes.TrimSpace(line)) > 0 {
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

// readLine reads one line of at most maxLine bytes; of a longer one it keeps nothing
// and says so.
func readLine(br *bufio.Reader) (line []byte, long bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !long {
			if len(line)+len(chunk) > maxLine {
				long, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err != bufio.ErrBufferFull {
			return line, long, err
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
