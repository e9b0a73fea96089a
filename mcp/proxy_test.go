package mcp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agmem/agmem/mcp/mcptest"
)

// server is the path of mcptest's server: this test binary under another name.
var server string

func TestMain(m *testing.M) {
	mcptest.RunIfServer()
	dir, err := os.MkdirTemp("", "mcptest-")
	if err == nil {
		server, err = mcptest.Install(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// session is a client of a Proxy that runs in this process.
type session struct {
	t       *testing.T
	in      *io.PipeWriter
	lines   chan string // what the proxy wrote to the client, line by line; closed after Run
	stderr  lockedBuffer
	signals chan os.Signal
	ended   chan *os.ProcessState

	mu       sync.Mutex
	calls    []Call
	warnings []string
}

// start runs p (its Record and Warn taken by the session) in front of command.
func start(t *testing.T, p *Proxy, command string, args ...string) *session {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &session{t: t, in: inW, lines: make(chan string, 1000), signals: make(chan os.Signal, 1), ended: make(chan *os.ProcessState, 1)}
	p.Command, p.Args, p.Stdin, p.Stdout, p.Stderr, p.Signals = command, args, inR, outW, &s.stderr, s.signals
	if p.Record == nil {
		p.Record = func(calls []Call) error {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.calls = append(s.calls, calls...)
			return nil
		}
	}
	p.Warn = func(err error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.warnings = append(s.warnings, err.Error())
	}
	go func() {
		br := bufio.NewReader(outR)
		for {
			l, err := br.ReadString('\n')
			if l != "" {
				s.lines <- l
			}
			if err != nil {
				close(s.lines)
				return
			}
		}
	}()
	go func() {
		state, err := p.Run()
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		outW.Close()
		inR.Close()
		s.ended <- state
	}()
	t.Cleanup(func() { inW.Close() })
	return s
}

func (s *session) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatalf("send: %v", err)
	}
}

// recv is the next line the proxy wrote to the client, without its newline.
func (s *session) recv() string {
	s.t.Helper()
	select {
	case l, ok := <-s.lines:
		if !ok {
			s.t.Fatal("recv: the proxy's output ended")
		}
		return strings.TrimSuffix(l, "\n")
	case <-time.After(time.Minute):
		s.t.Fatal("recv: nothing for a minute")
	}
	return ""
}

// wait closes the client's side and returns how the server ended.
func (s *session) wait() *os.ProcessState {
	s.t.Helper()
	s.in.Close()
	select {
	case state := <-s.ended:
		return state
	case <-time.After(20 * time.Second):
		s.t.Fatalf("the proxy did not end; server's stderr: %s", s.stderr.String())
	}
	return nil
}

func (s *session) recorded() ([]Call, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...), append([]string(nil), s.warnings...)
}

// initialize does the MCP handshake, which also tells that the server is up.
func (s *session) initialize() {
	s.t.Helper()
	s.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if l := s.recv(); !strings.Contains(l, `"serverInfo"`) {
		s.t.Fatalf("initialize answered %s", l)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func toolCall(id int, tool, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args)
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func TestRelaysEveryByteBothWays(t *testing.T) {
	// cat answers each line with itself: what comes back must be what was sent, byte
	// for byte, whatever it holds.
	input := strings.Join([]string{
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"caf\u00e9 ☕ \"quoted\"  "}}` + "\n",
		`{ "jsonrpc" : "2.0" , "id" : 1e0 , "result" : { } }` + "\r\n",
		"\n",
		"not json at all\n",
		`{"jsonrpc":"2.0","method":"x","params":{"big":"` + strings.Repeat("é", 16<<20) + `"}}` + "\n", // 32 MiB
		`{"jsonrpc":"2.0","method":"last line without a newline"}`,
	}, "")
	s := start(t, &Proxy{Grace: time.Second}, "cat")
	go func() {
		io.WriteString(s.in, input)
		s.in.Close()
	}()
	var got strings.Builder
	for l := range s.lines {
		got.WriteString(l)
	}
	if state := s.wait(); !state.Success() {
		t.Errorf("cat ended: %v", state)
	}
	if got.Len() != len(input) || got.String() != input {
		t.Fatalf("relayed %d bytes, sent %d; they differ", got.Len(), len(input))
	}
}

func TestRecordsCallsWithMessagesOf32MiB(t *testing.T) {
	s := start(t, &Proxy{}, server)
	s.initialize()
	big := strings.Repeat("a", 32<<20)
	s.send(toolCall(1, "echo", `{"text":"`+big+`"}`))
	if l := s.recv(); len(l) < 32<<20 || !strings.Contains(l, `"id":1`) {
		t.Fatalf("echo of 32 MiB answered %d bytes", len(l))
	}
	s.send(toolCall(2, "big", `{"bytes":33554432}`))
	if l := s.recv(); len(l) < 32<<20 || !strings.Contains(l, `"id":2`) {
		t.Fatalf("big answered %d bytes", len(l))
	}
	s.wait()
	calls, warnings := s.recorded()
	if len(calls) != 2 || len(calls[0].Result) != 32<<20+2 || len(calls[1].Result) != 32<<20+2 || len(warnings) != 0 {
		t.Fatalf("recorded %d calls, warnings %q", len(calls), warnings)
	}
	if len(calls[0].Arguments) != 32<<20+11 {
		t.Errorf("arguments of %d bytes recorded", len(calls[0].Arguments))
	}
}

func TestAMessageLargerThanTheBoundIsRelayedNotRead(t *testing.T) {
	s := start(t, &Proxy{MaxMessage: 1 << 20, Grace: 100 * time.Millisecond}, server)
	s.initialize()
	s.send(toolCall(1, "big", `{"bytes":2000000}`))
	if l := s.recv(); len(l) < 2000000 {
		t.Fatalf("big answered %d bytes", len(l))
	}
	s.wait()
	calls, warnings := s.recorded()
	if len(warnings) != 1 || !strings.Contains(warnings[0], "a message over 1048576 bytes") {
		t.Errorf("warnings: %q", warnings)
	}
	if len(calls) != 1 || !strings.HasPrefix(calls[0].Error, "no answer") {
		t.Errorf("recorded %+v", calls)
	}
}

func TestTheServersRequestsUnderTheClientsIDs(t *testing.T) {
	s := start(t, &Proxy{}, server)
	s.initialize()
	s.send(toolCall(1, "ask", `{"text":"may I?"}`))
	if l := s.recv(); !strings.Contains(l, `"id":1`) || !strings.Contains(l, `"method":"sampling/createMessage"`) {
		t.Fatalf("the server asked %s", l)
	}
	s.send(`{"jsonrpc":"2.0","id":1,"result":{"role":"assistant","content":{"type":"text","text":"yes"},"model":"m"}}`)
	if l := s.recv(); !strings.Contains(l, `"the client said: yes"`) {
		t.Fatalf("the call was answered %s", l)
	}
	s.wait()
	calls, _ := s.recorded()
	if len(calls) != 1 || calls[0].Tool != "ask" || string(calls[0].Result) != `"the client said: yes"` || calls[0].Error != "" {
		t.Fatalf("recorded %+v", calls)
	}
}

func TestNotificationsPassAndACancelledCallIsRecordedAsSuch(t *testing.T) {
	s := start(t, &Proxy{}, server)
	s.initialize()
	s.send(toolCall(1, "notify", `{"text":"the answer"}`))
	for _, want := range []string{"notifications/message", "notifications/progress", `"the answer"`} {
		if l := s.recv(); !strings.Contains(l, want) {
			t.Fatalf("got %s, want %s", l, want)
		}
	}
	s.send(toolCall(2, "slow", `{"ms":60000,"text":"never"}`))
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"the user pressed Esc"}}`)
	s.send(toolCall(3, "echo", `{"text":"after the cancel"}`))
	if l := s.recv(); !strings.Contains(l, "after the cancel") {
		t.Fatalf("got %s", l)
	}
	s.wait()
	calls, _ := s.recorded()
	if len(calls) != 3 || calls[1].Tool != "slow" || calls[1].Error != "cancelled by the client: the user pressed Esc" {
		t.Fatalf("recorded %+v", calls)
	}
}

func TestBatches(t *testing.T) {
	s := start(t, &Proxy{}, server)
	s.initialize()
	s.send("[" + toolCall(1, "echo", `{"text":"one"}`) + `,{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},` +
		toolCall(2, "fail", `{"text":"two failed"}`) + "]")
	if l := s.recv(); !strings.HasPrefix(l, "[") || !strings.Contains(l, "one") || !strings.Contains(l, "two failed") {
		t.Fatalf("the batch was answered %s", l)
	}
	s.wait()
	calls, _ := s.recorded()
	if len(calls) != 2 || calls[0].Tool != "echo" || calls[1].Error != "two failed" {
		t.Fatalf("recorded %+v", calls)
	}
}

func TestAServerThatCrashes(t *testing.T) {
	s := start(t, &Proxy{Grace: time.Minute}, server)
	s.initialize()
	s.send(toolCall(1, "echo", `{"text":"before the crash"}`))
	s.recv()
	s.send(toolCall(2, "hang", `{}`))
	s.send(toolCall(3, "crash", `{"code":7}`))
	select {
	case state := <-s.ended: // the client has not closed its input: the crash ends the proxy
		if ExitCode(state) != 7 {
			t.Errorf("exit code %d, want 7", ExitCode(state))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the proxy did not end when the server crashed")
	}
	calls, _ := s.recorded()
	if len(calls) != 3 || calls[0].Error != "" {
		t.Fatalf("recorded %+v", calls)
	}
	for _, c := range calls[1:] {
		if c.Error != "no answer: the server ended (exit status 7)" {
			t.Errorf("%s: error %q", c.Tool, c.Error)
		}
	}
}

func TestWhenTheClientClosesCallsInFlightAreAnsweredWithinGrace(t *testing.T) {
	s := start(t, &Proxy{Grace: 5 * time.Second}, server)
	s.initialize()
	s.send(toolCall(1, "slow", `{"ms":300,"text":"answered after the client closed"}`))
	began := time.Now()
	state := s.wait()
	if !state.Success() || time.Since(began) > 4*time.Second {
		t.Errorf("ended %v after %v", state, time.Since(began))
	}
	var out []string
	for l := range s.lines {
		out = append(out, l)
	}
	if len(out) != 1 || !strings.Contains(out[0], "answered after the client closed") {
		t.Errorf("relayed after the close: %q", out)
	}
	calls, _ := s.recorded()
	if len(calls) != 1 || calls[0].Error != "" {
		t.Fatalf("recorded %+v", calls)
	}
}

func TestWhenTheClientClosesCallsNotAnsweredWithinGraceAreRecorded(t *testing.T) {
	s := start(t, &Proxy{Grace: 200 * time.Millisecond}, server)
	s.initialize()
	s.send(toolCall(1, "hang", `{}`))
	s.wait()
	calls, _ := s.recorded()
	if len(calls) != 1 || calls[0].Error != "no answer within 200ms of the client closing its input" {
		t.Fatalf("recorded %+v", calls)
	}
}

func TestAServerThatWillNotStopIsTerminatedThenKilled(t *testing.T) {
	s := start(t, &Proxy{Grace: 100 * time.Millisecond}, server, "-ignore-eof", "-ignore-term")
	s.initialize()
	state := s.wait()
	if code := ExitCode(state); code != 128+int(syscall.SIGKILL) {
		t.Errorf("exit code %d (%v), want SIGKILL's", code, state)
	}
	if !strings.Contains(s.stderr.String(), "got terminated") {
		t.Errorf("the server was not sent SIGTERM first; its stderr: %q", s.stderr.String())
	}
}

func TestSignalsAreForwarded(t *testing.T) {
	s := start(t, &Proxy{Grace: time.Minute}, server)
	s.initialize()
	s.send(toolCall(1, "hang", `{}`))
	s.signals <- syscall.SIGTERM
	select {
	case state := <-s.ended:
		if ExitCode(state) != 3 {
			t.Errorf("exit code %d, want the server's 3", ExitCode(state))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the proxy did not end")
	}
	if !strings.Contains(s.stderr.String(), "got terminated") {
		t.Errorf("server's stderr: %q", s.stderr.String())
	}
	calls, _ := s.recorded()
	if len(calls) != 1 || calls[0].Error != "no answer: the server ended (exit status 3)" {
		t.Fatalf("recorded %+v", calls)
	}
}

func TestRelayingGoesOnWhileRecordingIsStuck(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var batches [][]Call
	p := &Proxy{Record: func(calls []Call) error {
		<-release
		mu.Lock()
		defer mu.Unlock()
		batches = append(batches, calls)
		return nil
	}}
	s := start(t, p, server)
	s.initialize()
	for i := 1; i <= 20; i++ {
		s.send(toolCall(i, "echo", fmt.Sprintf(`{"text":"call %d"}`, i)))
		if l := s.recv(); !strings.Contains(l, fmt.Sprintf("call %d", i)) {
			t.Fatalf("call %d answered %s", i, l)
		}
	}
	close(release)
	s.wait()
	// Every call recorded once, in the order it was made. How many batches they came in
	// depends on how the relays, the tracker and the recorder were scheduled (an answer
	// reaches the client before its call reaches the recorder); that calls finishing
	// while a batch is written go together is TestRecorderCoalescesWhileABatchIsWritten's.
	var args []string
	for _, b := range batches {
		for _, c := range b {
			args = append(args, string(c.Arguments))
		}
	}
	if len(args) != 20 {
		t.Fatalf("recorded %d calls in %d batches, want 20", len(args), len(batches))
	}
	for i, a := range args {
		if want := fmt.Sprintf(`{"text":"call %d"}`, i+1); a != want {
			t.Errorf("call %d recorded with %s, want %s", i+1, a, want)
		}
	}
}

func TestARecordThatFailsIsToldOnceAndRelayingGoesOn(t *testing.T) {
	s := start(t, &Proxy{Record: func([]Call) error { return errors.New("journal: read-only file system") }}, server)
	s.initialize()
	for i := 1; i <= 3; i++ {
		s.send(toolCall(i, "echo", `{"text":"still relayed"}`))
		if l := s.recv(); !strings.Contains(l, "still relayed") {
			t.Fatalf("call %d answered %s", i, l)
		}
	}
	s.wait()
	_, warnings := s.recorded()
	if len(warnings) != 1 || warnings[0] != "calls are not being recorded (relaying goes on): journal: read-only file system" {
		t.Errorf("warnings: %q", warnings)
	}
}
