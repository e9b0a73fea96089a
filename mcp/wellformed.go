package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK's stdio transport ends the session on a line it cannot read as a JSON-RPC
// message, and agmem mcp serve with it: one bad line from a client, and every call
// after it, and those in flight, went unanswered. wellFormed passes the SDK only the
// lines that are messages, and answers each other one itself, as JSON-RPC says: a
// parse error for what is not JSON, an invalid request for JSON that is no message.

// maxLine bounds a line, as the SDK bounds a message.
const maxLine = sdk.DefaultMaxLineLength

// wellFormed reads newline-delimited JSON-RPC from in, as the SDK's transport reads it.
// At the end of in, it ends the session only once every request it passed on has its
// answer (inFlight): the SDK's transport ended it at once, and a client that sent its
// calls and closed its side (a script, a pipe) got none of the answers still on their
// way.
type wellFormed struct {
	in      *bufio.Reader
	closer  io.Closer
	answers *lockedWriter // where a bad line is answered, and the SDK answers
	next    []byte        // what is left of the last good line
	closed  chan struct{} // closed by Close: the session ended, nothing is waited for
	once    sync.Once
}

func newWellFormed(in io.ReadCloser, answers *lockedWriter) *wellFormed {
	return &wellFormed{in: bufio.NewReaderSize(in, 64<<10), closer: in, answers: answers, closed: make(chan struct{})}
}

// lastAnswers bounds how long the end of the input waits for the answers in flight.
const lastAnswers = 30 * time.Second

func (r *wellFormed) Read(p []byte) (int, error) {
	for len(r.next) == 0 {
		line, tooLong, err := r.line()
		if tooLong {
			if err := r.answers.refuse(errorAnswer(nil, jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("invalid request: a line longer than %d bytes", maxLine))); err != nil {
				return 0, err
			}
		} else if len(line) > 0 {
			msg, answer := readLine(line)
			if answer == nil && !r.answers.inFlight.read(msg) {
				answer = errorAnswer(idOf(line), jsonrpc.CodeInvalidRequest, "invalid request: a request of this id is in flight: give each request an id of its own")
			}
			if answer != nil {
				if err := r.answers.refuse(answer); err != nil {
					return 0, err
				}
			} else {
				r.next = append(line, '\n')
			}
		}
		if err != nil && len(r.next) == 0 {
			if errors.Is(err, io.EOF) {
				r.answers.inFlight.wait(lastAnswers, r.closed)
			}
			return 0, err
		}
		if err != nil {
			break // the last line goes first; the error comes again on the next read
		}
	}
	n := copy(p, r.next)
	r.next = r.next[n:]
	return n, nil
}

func (r *wellFormed) Close() error {
	r.once.Do(func() { close(r.closed) })
	return r.closer.Close()
}

// line reads the next line, without the space around it; one longer than maxLine is
// read to its end and passed over (tooLong), not kept.
func (r *wellFormed) line() (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.in.ReadSlice('\n')
		// A message of maxLine bytes is the SDK's, with its line's end ("\r\n").
		if tooLong = tooLong || len(line)+len(chunk) > maxLine+2; tooLong {
			line = nil
		} else {
			line = append(line, chunk...)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return bytes.TrimSpace(line), tooLong, err
		}
	}
}

// readLine reads a line as the SDK will: the message it is, or the answer to a line
// that is no JSON-RPC message.
func readLine(line []byte) (msg jsonrpc.Message, answer []byte) {
	if !json.Valid(line) {
		why := "the line is not JSON"
		if err := json.Unmarshal(line, new(any)); err != nil && strings.Contains(err.Error(), "exceeded max depth") {
			why = "the line's JSON is nested too deeply (past 10,000 levels)"
		}
		return nil, errorAnswer(nil, jsonrpc.CodeParseError, "parse error: "+why)
	}
	if line[0] == '[' {
		// The SDK refuses a batch, and ends the session, once it speaks 2025-06-18 or
		// later, as Claude Code does; the MCP revisions before allowed them, and no
		// client agmem knows sends one.
		return nil, errorAnswer(nil, jsonrpc.CodeInvalidRequest, "invalid request: batches are not supported: send one message a line")
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, errorAnswer(idOf(line), jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
	}
	if _, ok := msg.(*jsonrpc.Request); ok {
		if id := idOf(line); id != nil && !wellFormedID(id) {
			return nil, errorAnswer(id, jsonrpc.CodeInvalidRequest, "invalid request: an id is a string or an integer within ±2^53, never null (MCP)")
		}
	}
	return msg, nil
}

// idOf is the id a line names, as it is written; nil where it names none.
func idOf(line []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	json.Unmarshal(line, &m)
	return m.ID
}

// wellFormedID says whether id is one MCP allows a request: a string or an integer
// the SDK reads as itself (1.0 is 1): within ±2^53, since it reads a number as a
// float64. It read a request whose id is null as a notification, which it does not
// answer, 1.5 as 1, and 2^53+1 as 2^53.
func wellFormedID(id json.RawMessage) bool {
	if id[0] == '"' {
		return true
	}
	if n, err := strconv.ParseInt(string(id), 10, 64); err == nil {
		return n >= -maxExactID && n <= maxExactID
	}
	// Written as a float (1.0, 1e3): within the bound strictly, as 2^53+1 reads as 2^53.
	f, err := strconv.ParseFloat(string(id), 64)
	return err == nil && f == math.Trunc(f) && math.Abs(f) < maxExactID
}

// maxExactID is the largest integer a float64 holds exactly, and every one below it.
const maxExactID = 1 << 53

// errorAnswer is a JSON-RPC error response to the request id names: null when the id
// is none a request may have (a string or a number).
func errorAnswer(id json.RawMessage, code int64, message string) []byte {
	var v any
	if json.Unmarshal(id, &v) != nil {
		v = nil
	}
	switch v.(type) {
	case string, float64:
	default:
		id = json.RawMessage("null")
	}
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": code, "message": message}})
	return append(out, '\n')
}

// lockedWriter writes each message whole: the SDK writes one a call, and so does
// wellFormed, from the reading goroutine.
type lockedWriter struct {
	mu       sync.Mutex
	w        io.WriteCloser
	inFlight inFlight
}

// Write writes a message of the SDK's: an answer is one request less in flight. The
// answer is read back from its bytes, not taken from a Connection wrapped around the
// SDK's: that would hide the stdio connection's unexported hook for the protocol's
// version, which the SDK reads its batches by.
func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	out, send := w.inFlight.answered(p)
	if !send {
		return len(p), nil
	}
	if _, err := w.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// refuse writes wellFormed's answer to a line it did not pass on, which answers no
// request in flight, whatever id it names.
func (w *lockedWriter) refuse(answer []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err := w.w.Write(answer)
	return err
}

func (w *lockedWriter) Close() error { return w.w.Close() }

// inFlight are the requests read and not answered yet, by id as the SDK reads it (a
// number is an int64: 1.0 and 1 are one id).
type inFlight struct {
	mu        sync.Mutex
	ids       map[jsonrpc.ID]bool
	cancelled map[jsonrpc.ID]bool // in flight when the client cancelled them
	empty     chan struct{}       // closed when ids is, while wait waits
}

// read notes a message read, and says whether to pass it on: a request is in flight
// until answered, and one of an id in flight already is not passed on (the SDK would
// answer one of the two). One the client cancelled is not answered (MCP's
// cancellation), so no longer waited for.
func (f *inFlight) read(msg jsonrpc.Message) bool {
	req, ok := msg.(*jsonrpc.Request)
	switch {
	case !ok:
	case req.Method == "notifications/cancelled":
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) == nil {
			if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
				f.mu.Lock()
				if f.ids[id] {
					if f.cancelled == nil {
						f.cancelled = map[jsonrpc.ID]bool{}
					}
					f.cancelled[id] = true
				}
				f.mu.Unlock()
				f.done(id)
			}
		}
	case req.IsCall():
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.ids[req.ID] || f.cancelled[req.ID] {
			return false
		}
		if f.ids == nil {
			f.ids = map[jsonrpc.ID]bool{}
		}
		f.ids[req.ID] = true
	}
	return true
}

// answered notes a message the SDK wrote, and gives what to send of it: an answer is no
// longer in flight, and one to a request the client cancelled is not sent. An error
// the SDK wrote without a JSON-RPC code (code 0, as to a call before initialize) is
// sent as an internal error, its message kept.
func (f *inFlight) answered(out []byte) (send []byte, ok bool) {
	msg, err := jsonrpc.DecodeMessage(out)
	res, isAnswer := msg.(*jsonrpc.Response)
	if err != nil || !isAnswer {
		return out, true
	}
	f.mu.Lock()
	cancelled := f.cancelled[res.ID]
	delete(f.cancelled, res.ID)
	f.mu.Unlock()
	f.done(res.ID)
	if cancelled {
		return nil, false
	}
	var we *jsonrpc.Error
	if errors.As(res.Error, &we) && we.Code == 0 {
		we.Code = jsonrpc.CodeInternalError
		if b, err := jsonrpc.EncodeMessage(res); err == nil {
			return append(b, '\n'), true
		}
	}
	return out, true
}

func (f *inFlight) done(id jsonrpc.ID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.ids, id)
	if len(f.ids) == 0 && f.empty != nil {
		close(f.empty)
		f.empty = nil
	}
}

// wait waits until every request read is answered, or gone is closed, or at most
// bound.
func (f *inFlight) wait(bound time.Duration, gone <-chan struct{}) {
	f.mu.Lock()
	if len(f.ids) == 0 {
		f.mu.Unlock()
		return
	}
	empty := make(chan struct{})
	f.empty = empty
	f.mu.Unlock()
	select {
	case <-empty:
	case <-gone:
	case <-time.After(bound):
	}
}
