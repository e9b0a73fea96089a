package mcp

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agmem/agmem/maintain"
	"github.com/agmem/agmem/recall"
)

// TestServeGoesOnPastABadLine: a line that is no JSON-RPC message gets an error answer,
// with the request's id where it has one, and the calls after it are answered, though
// the input ends right after them; the SDK's transport alone ended the session on a bad
// line, and at the end of its input before the calls in flight were answered.
func TestServeGoesOnPastABadLine(t *testing.T) {
	repo, _, err := maintain.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mem, err := recall.Open(context.Background(), repo)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`not json`,
		`{}`,
		`[]`,
		`{"jsonrpc":"1.0","id":7,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list"}`,
		"",
		`{"jsonrpc":"2.0","id":"a","method":"tools/list"}`,
		`[{"jsonrpc":"2.0","id":8,"method":"tools/list"}, 5]`,
		`[{"jsonrpc":"2.0","id":9,"method":"tools/list"}]`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sessions","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3.0,"method":"tools/list"}`,
		strings.Repeat("[", 20000) + strings.Repeat("]", 20000),
	}
	inR, inW := io.Pipe()
	out := &lockedBuffer{}
	done := make(chan error, 1)
	go func() { done <- NewServer(mem, "test").Run(context.Background(), inR, nopWriteCloser{out}) }()
	// The input ends at once, as a client's that sends its calls and closes its side:
	// every call it sent is answered all the same before the session ends.
	io.WriteString(inW, strings.Join(lines, "\n")+"\n")
	inW.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not end at the end of its input")
	}
	got := out.String()
	for _, want := range []string{
		`{"error":{"code":-32700,"message":"parse error: the line is not JSON"},"id":null,"jsonrpc":"2.0"}`,
		`"code":-32600,"message":"invalid request: batches are not supported: send one message a line"},"id":null`,
		`"id":7,"jsonrpc":"2.0"}`,
		`"id":"a","result":{`,
		`"id":2,"result":{"content":`,
		`"id":3,"result":{`,
		`"message":"parse error: the line's JSON is nested too deeply (past 10,000 levels)"}`,
		`"message":"invalid request: an id is a string or an integer within ±2^53, never null (MCP)"},"id":1.5,`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %s in:\n%s", want, got)
		}
	}
	if n := strings.Count(got, `"code":-32600`); n != 10 {
		t.Errorf("%d invalid requests answered, want 10:\n%s", n, got)
	}
}

// nopWriteCloser is a writer the server may close.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// TestInFlight: a request is in flight until a message the SDK writes answers its id,
// as the SDK reads ids (1.0 is 1), whatever its params; a notification never is; nor a
// request the client cancelled, which MCP lets the server leave unanswered, and whose
// answer is not sent; and an answer wellFormed gives a bad line that names an id in
// flight does not count. A request of an id in flight is not passed on; an error the
// SDK gives no code is sent as an internal error.
func TestInFlight(t *testing.T) {
	out := &lockedBuffer{}
	w := &lockedWriter{w: nopWriteCloser{out}}
	f := &w.inFlight
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1.0,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"search"}}`,
		`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"search"}}`,
		`{"jsonrpc":"2.0","id":"c","method":"odd","params":["an","array"]}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}`,
	} {
		msg, answer := readLine([]byte(line))
		if answer != nil {
			t.Fatalf("%s: %s", line, answer)
		}
		if !f.read(msg) {
			t.Fatalf("%s: not passed on", line)
		}
	}
	for _, again := range []string{`{"jsonrpc":"2.0","id":"b","method":"tools/list"}`, `{"jsonrpc":"2.0","id":"a","method":"tools/list"}`} {
		if msg, _ := readLine([]byte(again)); f.read(msg) {
			t.Errorf("%s passed on, while a request of its id is in flight, or cancelled and running", again)
		}
	}
	io.WriteString(w, `{"jsonrpc":"2.0","id":"a","error":{"code":0,"message":"context canceled"}}`+"\n")
	io.WriteString(w, `{"jsonrpc":"2.0","id":"x","error":{"code":0,"message":"method \"tools/list\" is invalid during session initialization"}}`+"\n")
	io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n")
	io.WriteString(w, `{"jsonrpc":"2.0","id":"b","method":"ping"}`+"\n") // a request of the server's, not an answer
	io.WriteString(w, `{"jsonrpc":"2.0","id":"c","result":{}}`+"\n")
	w.refuse(errorAnswer([]byte(`"b"`), -32600, "a bad line that names b"))
	waited := make(chan struct{})
	go func() {
		f.wait(time.Minute, nil)
		close(waited)
	}()
	select {
	case <-waited:
		t.Fatal("wait ended while b was unanswered")
	case <-time.After(50 * time.Millisecond):
	}
	io.WriteString(w, `{"jsonrpc":"2.0","id":"b","error":{"code":-1,"message":"no"}}`+"\n")
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		t.Fatal("wait did not end once every request was answered")
	}
	got := out.String()
	if strings.Contains(got, `"id":"a"`) {
		t.Errorf("the cancelled request was answered:\n%s", got)
	}
	if !strings.Contains(got, `{"jsonrpc":"2.0","id":"x","error":{"code":-32603,"message":"method \"tools/list\" is invalid during session initialization"}}`) {
		t.Errorf("an error without a code not sent as an internal error:\n%s", got)
	}
}
