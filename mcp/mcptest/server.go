// Package mcptest is a stdio MCP server for tests, with the odd behaviours that real
// servers and clients have and that a proxy must survive: large messages, requests of
// its own whose ids are the client's, notifications, cancelled calls, batches, crashes,
// signals, and not stopping when asked.
//
// A test binary becomes the server when it runs under the name Name: call RunIfServer
// first thing in TestMain (or in an init function), and start the server as the path
// Install returns.
//
// Its tools, chosen by a tools/call's name:
//
//	echo {text}          answers text
//	big {bytes}          answers that many "x"
//	fail {text}          answers text with isError: true
//	reject               answers a JSON-RPC error -32602
//	structured {value}   answers value as structuredContent, and as JSON text
//	slow {ms, text}      answers text after ms milliseconds; a cancelled one never
//	hang                 never answers
//	ask {text}           first asks the client for sampling/createMessage under the
//	                     call's own id, then answers with the text the client gave
//	notify {text}        sends a log message and a progress notification, then answers
//	crash {code}         exits with code at once
//
// A batch (a JSON array) is answered with an array. On SIGINT or SIGTERM the server says
// which on stderr and exits 3, unless -ignore-term; when its input ends it exits 0, once
// its slow calls are answered, unless -ignore-eof.
package mcptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Name is the name the server runs under.
const Name = "mcp-test-server"

// RunIfServer runs the server and exits if this process was started as Name.
func RunIfServer() {
	if filepath.Base(os.Args[0]) == Name {
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
}

// Install makes, in dir, a link named Name to this executable, and returns its path.
func Install(dir string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, Name)
	return path, os.Symlink(self, path)
}

// Main serves one client on in and out until in ends, and returns the exit code.
func Main(args []string, in io.Reader, out, errw io.Writer) int {
	flags := flag.NewFlagSet(Name, flag.ContinueOnError)
	ignoreEOF := flags.Bool("ignore-eof", false, "keep running when the input ends")
	ignoreTerm := flags.Bool("ignore-term", false, "say so on SIGTERM, and keep running")
	if flags.Parse(args) != nil {
		return 1
	}
	s := &server{out: out, cancelled: map[string]chan struct{}{}, answers: map[string]chan json.RawMessage{}}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		for sig := range signals {
			fmt.Fprintf(errw, "%s: got %s\n", Name, sig)
			if !*ignoreTerm {
				os.Exit(3)
			}
		}
	}()
	br := bufio.NewReader(in)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			s.handle(line)
		}
		if err != nil {
			break
		}
	}
	if *ignoreEOF {
		select {}
	}
	s.slow.Wait()
	return 0
}

type server struct {
	mu        sync.Mutex // one message at a time on out
	out       io.Writer
	slow      sync.WaitGroup
	calls     sync.Mutex
	cancelled map[string]chan struct{}        // slow calls, by id
	answers   map[string]chan json.RawMessage // the client's answers to the server's requests, by id
}

type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string `json:"name"`
		Arguments struct {
			Text  string          `json:"text"`
			Bytes int             `json:"bytes"`
			MS    int             `json:"ms"`
			Code  int             `json:"code"`
			Value json.RawMessage `json:"value"`
		} `json:"arguments"`
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
	Result json.RawMessage `json:"result"`
}

func (s *server) send(v any) {
	data, _ := json.Marshal(v)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.out.Write(append(data, '\n'))
}

func (s *server) handle(line []byte) {
	if line = bytes.TrimSpace(line); line[0] == '[' {
		var batch []request
		if json.Unmarshal(line, &batch) != nil {
			return
		}
		var answers []any
		for _, r := range batch {
			if a := s.answer(r); a != nil {
				answers = append(answers, a)
			}
		}
		if len(answers) > 0 {
			s.send(answers)
		}
		return
	}
	var r request
	if json.Unmarshal(line, &r) != nil {
		return
	}
	if a := s.answer(r); a != nil {
		s.send(a)
	}
}

// answer is the answer to r when it is due at once, or nil.
func (s *server) answer(r request) any {
	id := string(r.ID)
	switch r.Method {
	case "":
		s.calls.Lock()
		c := s.answers[id]
		s.calls.Unlock()
		if c != nil {
			c <- r.Result
		}
		return nil
	case "notifications/cancelled":
		s.calls.Lock()
		if c := s.cancelled[string(r.Params.RequestID)]; c != nil {
			close(c)
			delete(s.cancelled, string(r.Params.RequestID))
		}
		s.calls.Unlock()
		return nil
	case "initialize":
		return result(r.ID, map[string]any{"protocolVersion": "2025-06-18",
			"capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": Name, "version": "1"}})
	case "tools/list":
		var tools []map[string]any
		for _, t := range []string{"echo", "big", "fail", "reject", "structured", "slow", "hang", "ask", "notify", "crash"} {
			tools = append(tools, map[string]any{"name": t, "inputSchema": map[string]any{"type": "object"}})
		}
		return result(r.ID, map[string]any{"tools": tools})
	case "tools/call":
		return s.call(r)
	}
	if len(r.ID) == 0 {
		return nil
	}
	return map[string]any{"jsonrpc": "2.0", "id": r.ID, "error": map[string]any{"code": -32601, "message": "method not found"}}
}

func (s *server) call(r request) any {
	a := r.Params.Arguments
	switch r.Params.Name {
	case "echo":
		return text(r.ID, a.Text, false)
	case "big":
		return text(r.ID, strings.Repeat("x", a.Bytes), false)
	case "fail":
		return text(r.ID, a.Text, true)
	case "structured":
		return result(r.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": string(a.Value)}},
			"structuredContent": a.Value})
	case "notify":
		s.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
			"params": map[string]any{"level": "info", "data": "working on " + a.Text}})
		s.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress",
			"params": map[string]any{"progressToken": 1, "progress": 1, "total": 1}})
		return text(r.ID, a.Text, false)
	case "slow":
		s.later(r, func(done <-chan struct{}) any {
			select {
			case <-time.After(time.Duration(a.MS) * time.Millisecond):
				return text(r.ID, a.Text, false)
			case <-done:
				return nil
			}
		})
		return nil
	case "hang":
		return nil
	case "ask":
		s.later(r, func(<-chan struct{}) any {
			answer := make(chan json.RawMessage, 1)
			s.calls.Lock()
			s.answers[string(r.ID)] = answer
			s.calls.Unlock()
			s.send(map[string]any{"jsonrpc": "2.0", "id": r.ID, "method": "sampling/createMessage",
				"params": map[string]any{"messages": []any{map[string]any{"role": "user",
					"content": map[string]any{"type": "text", "text": a.Text}}}, "maxTokens": 10}})
			var got struct {
				Content struct {
					Text string `json:"text"`
				} `json:"content"`
			}
			json.Unmarshal(<-answer, &got)
			return text(r.ID, "the client said: "+got.Content.Text, false)
		})
		return nil
	case "crash":
		os.Exit(a.Code)
	}
	return map[string]any{"jsonrpc": "2.0", "id": r.ID, "error": map[string]any{"code": -32602, "message": "unknown tool " + r.Params.Name}}
}

// later answers r when answer returns, on a goroutine of its own; done is closed if
// the client cancels r.
func (s *server) later(r request, answer func(done <-chan struct{}) any) {
	done := make(chan struct{})
	s.calls.Lock()
	s.cancelled[string(r.ID)] = done
	s.calls.Unlock()
	s.slow.Add(1)
	go func() {
		defer s.slow.Done()
		if a := answer(done); a != nil {
			s.send(a)
		}
	}()
}

func result(id json.RawMessage, v any) any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "result": v}
}

func text(id json.RawMessage, t string, isError bool) any {
	return result(id, map[string]any{"content": []any{map[string]any{"type": "text", "text": t}}, "isError": isError})
}
