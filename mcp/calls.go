package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/agmem/agmem/record"
)

// ToolsCall is the method of a call of a tool, the request the proxy always records.
const ToolsCall = "tools/call"

// Source names the proxy as the adapter that captured an observation.
const Source = "mcp"

// Call is one request of the client's and what became of it.
type Call struct {
	Method    string          // ToolsCall, or another method the proxy was asked to record
	Tool      string          // the tool's name, for ToolsCall
	Arguments json.RawMessage // the tool's arguments as sent; for another method, its params
	Result    json.RawMessage // the answer: the text of a tool's content, else JSON as sent
	Error     string          // why the call failed: an error answer, isError, cancelled, no answer
	Started   time.Time       // when the request passed through
	Duration  time.Duration   // until its answer passed through, or until it was given up on
	// ToolUseID and Session name the call as the agent's hooks name it, when the
	// request's _meta says (CallOf): with them, the call the hook records and the one the
	// proxy records are one (FORMAT.md §Identity). Session "": the agent's session is not
	// in the request (Claude Code gives it in the environment).
	ToolUseID, Session string
}

// Observation is the call as it is recorded: named mcp__<server>__<tool> (another
// method keeps its name: mcp__<server>__resources/read).
func (c Call) Observation(server string) record.Observation {
	name := c.Method
	if c.Method == ToolsCall {
		name = c.Tool
	}
	o := record.Observation{Tool: "mcp__" + server + "__" + name, Error: c.Error, Source: Source,
		Time: c.Started, Duration: c.Duration, ToolUseID: c.ToolUseID, Session: c.Session}
	if len(c.Arguments) > 0 {
		o.Arguments = c.Arguments
	}
	if len(c.Result) > 0 {
		o.Result = c.Result
	}
	return o
}

// message is what the tracker reads of a JSON-RPC 2.0 message. Its result is read as
// a tool's, straight into the parts an observation keeps: an answer to tools/call, the
// call always recorded, is read once however large. The answers to other methods
// recorded are read again, as sent (rawResult).
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result *toolResult     `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	misread bool // a part had another shape than a tool's answer: Result is not to be trusted
}

// messages reads one line: a message, or a batch of them. A line that is not JSON-RPC
// holds none; it was passed on all the same.
func messages(line []byte) []message {
	line = bytes.TrimSpace(line)
	var ms []message
	var err error
	if len(line) > 0 && line[0] == '[' {
		err = json.Unmarshal(line, &ms)
	} else {
		ms = make([]message, 1)
		err = json.Unmarshal(line, &ms[0])
	}
	var shape *json.UnmarshalTypeError
	if err != nil && !errors.As(err, &shape) {
		return nil
	}
	for i := range ms {
		ms[i].misread = err != nil
	}
	return ms
}

// rawResult is the result, as sent, of the response in line (a message or a batch)
// whose id is key.
func rawResult(line []byte, key string) json.RawMessage {
	type response struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
	}
	var rs []response
	if line = bytes.TrimSpace(line); len(line) > 0 && line[0] == '[' {
		json.Unmarshal(line, &rs)
	} else {
		rs = make([]response, 1)
		json.Unmarshal(line, &rs[0])
	}
	for _, r := range rs {
		if idKey(r.ID) == key {
			return r.Result
		}
	}
	return nil
}

// key is an id as a map key.
func (m *message) key() string { return idKey(m.ID) }

// idKey is an id as the JSON value it is, not as it is spelled: a peer that writes it
// back as "\u00e9" for "é", or 1.0 for 1, answers the same request. A string and a
// number stay two ids ("1" is not 1), as JSON-RPC has it.
func idKey(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return string(raw)
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strconv.Quote(s)
	}
	if f, err := strconv.ParseFloat(string(raw), 64); err == nil && len(raw) <= 16 {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return string(raw)
}

func (m *message) hasID() bool {
	k := m.key()
	return k != "" && k != "null"
}

// tracker pairs the client's requests with the server's answers. It is used by one
// goroutine.
type tracker struct {
	record  func(string) bool // whether requests of a method become Calls
	pending map[string]*Call  // the client's requests not answered yet, by id; nil: not recorded
	done    func(Call)
}

func newTracker(methods []string, done func(Call)) *tracker {
	want := map[string]bool{ToolsCall: true}
	for _, m := range methods {
		want[m] = true
	}
	return &tracker{
		record:  func(method string) bool { return want[method] || want["*"] },
		pending: map[string]*Call{},
		done:    done,
	}
}

// fromClient reads a line the client sent at time t.
func (tr *tracker) fromClient(line []byte, t time.Time) {
	for _, m := range messages(line) {
		switch {
		case m.Method != "" && m.hasID():
			if old := tr.pending[m.key()]; old != nil {
				tr.finish(m.key(), old, "no answer: the client used its id again", t)
			}
			tr.pending[m.key()] = tr.request(m, t)
		case m.Method == "notifications/cancelled":
			tr.cancelled(m.Params, t)
		}
	}
}

// request is the Call a request starts, or nil if its method is not recorded.
func (tr *tracker) request(m message, t time.Time) *Call {
	if !tr.record(m.Method) {
		return nil
	}
	c := &Call{Method: m.Method, Arguments: m.Params, Started: t}
	if m.Method == ToolsCall {
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
			Meta      struct {
				ClaudeToolUseID string `json:"claudecode/toolUseId"` // Claude Code
				CallID          string `json:"callId"`               // Codex, with its session
				SessionID       string `json:"sessionId"`
			} `json:"_meta"`
		}
		json.Unmarshal(m.Params, &p)
		c.Tool, c.Arguments = p.Name, p.Arguments
		switch meta := p.Meta; {
		case meta.ClaudeToolUseID != "":
			c.ToolUseID = meta.ClaudeToolUseID
		case meta.CallID != "" && meta.SessionID != "":
			c.ToolUseID, c.Session = meta.CallID, meta.SessionID
		}
	}
	return c
}

// cancelled ends a call the client gave up on: a server should not answer it, and an
// answer that comes all the same is not read.
func (tr *tracker) cancelled(params json.RawMessage, t time.Time) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
		Reason    string          `json:"reason"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	k := string(bytes.TrimSpace(p.RequestID))
	c, ok := tr.pending[k]
	if !ok {
		return
	}
	why := "cancelled by the client"
	if p.Reason != "" {
		why += ": " + p.Reason
	}
	tr.finish(k, c, why, t)
}

// fromServer reads a line the server sent at time t. Only responses are read: the
// server's own requests and notifications are none of the client's calls.
func (tr *tracker) fromServer(line []byte, t time.Time) {
	for _, m := range messages(line) {
		if m.Method != "" || !m.hasID() {
			continue
		}
		c, ok := tr.pending[m.key()]
		if !ok {
			continue
		}
		delete(tr.pending, m.key())
		if c == nil {
			continue
		}
		c.Duration = t.Sub(c.Started)
		switch {
		case m.Error != nil:
			c.Error = fmt.Sprintf("%s (JSON-RPC error %d)", m.Error.Message, m.Error.Code)
			c.Result, _ = json.Marshal(c.Error)
		case c.Method == ToolsCall && !m.misread:
			var text string
			c.Result, text = m.Result.kept()
			if m.Result != nil && m.Result.IsError {
				c.Error = text
				if c.Error == "" {
					c.Error = "the tool reported an error"
				}
			}
		default:
			c.Result = rawResult(line, m.key())
		}
		tr.done(*c)
	}
}

// finish ends a call that got no answer it will read.
func (tr *tracker) finish(key string, c *Call, why string, t time.Time) {
	delete(tr.pending, key)
	if c != nil {
		c.Duration = t.Sub(c.Started)
		c.Error = why
		c.Result, _ = json.Marshal(why)
		tr.done(*c)
	}
}

// inFlight is how many of the client's requests await an answer.
func (tr *tracker) inFlight() int { return len(tr.pending) }

// end finishes every call still waiting, in the order they were made, with why.
func (tr *tracker) end(why string, t time.Time) {
	keys := make([]string, 0, len(tr.pending))
	for k := range tr.pending {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return started(tr.pending[keys[i]]).Before(started(tr.pending[keys[j]])) })
	for _, k := range keys {
		tr.finish(k, tr.pending[k], why, t)
	}
}

func started(c *Call) time.Time {
	if c == nil {
		return time.Time{}
	}
	return c.Started
}
