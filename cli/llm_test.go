package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// chatServer is a chat-completions server on localhost that answers each request with
// the next of its replies, the last one again once they run out, and notes each request
// it gets in the file logPath (when not ""), one line each.
type chatServer struct {
	*httptest.Server
	mu      sync.Mutex
	replies []reply
	logPath string
	closed  chan struct{}
}

// reply is one answer of a chatServer: a message, an HTTP error, or no answer at all.
type reply struct {
	content    string
	status     int
	retryAfter string
	hang       bool
}

// parseReply reads a reply as the llm-server command takes it: "answer=FILE", "hang",
// or an HTTP status such as "500" or "429/retry-after=1".
func parseReply(arg string, readFile func(string) string) (reply, error) {
	if file, ok := strings.CutPrefix(arg, "answer="); ok {
		return reply{content: readFile(file)}, nil
	}
	if arg == "hang" {
		return reply{hang: true}, nil
	}
	code, after, _ := strings.Cut(arg, "/retry-after=")
	status, err := strconv.Atoi(code)
	if err != nil || status < 400 {
		return reply{}, fmt.Errorf("reply %q: want answer=FILE, hang, or an error status such as 500 or 429/retry-after=1", arg)
	}
	return reply{status: status, retryAfter: after}, nil
}

func newChatServer(replies []reply, logPath string) *chatServer {
	s := &chatServer{replies: replies, logPath: logPath, closed: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

func (s *chatServer) Close() {
	close(s.closed)
	s.Server.Close()
}

func (s *chatServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var compact bytes.Buffer
	if json.Compact(&compact, body) != nil {
		compact.Write(body)
	}
	s.mu.Lock()
	if s.logPath != "" {
		if log, err := os.OpenFile(s.logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintf(log, "%s %s %s %s\n", r.Method, r.URL.Path, r.Header.Get("Authorization"), compact.Bytes())
			log.Close()
		}
	}
	next := s.replies[0]
	if len(s.replies) > 1 {
		s.replies = s.replies[1:]
	}
	s.mu.Unlock()

	w.Header().Set("Content-Type", "application/json")
	switch {
	case next.hang:
		select {
		case <-r.Context().Done():
		case <-s.closed:
		}
	case next.status != 0:
		if next.retryAfter != "" {
			w.Header().Set("Retry-After", next.retryAfter)
		}
		w.WriteHeader(next.status)
		fmt.Fprintf(w, `{"error":{"message":"%s","type":"test"}}`, http.StatusText(next.status))
	default:
		answer, _ := json.Marshal(next.content)
		fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"test-model",`+
			`"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":%s}}]}`, answer)
	}
}

// llmServerCmd is the script command "llm-server REPLY...": it starts a chat-completions
// server answering with the replies in turn (see parseReply), points OPENAI_BASE_URL at
// it, and logs its requests to $WORK/llm-requests.log (made at the first request; an
// earlier server's log is removed). "llm-server refused" points
// OPENAI_BASE_URL at a port where nothing listens.
func llmServerCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: llm-server REPLY... | llm-server refused")
	}
	if args[0] == "refused" {
		ts.Setenv("OPENAI_BASE_URL", "http://"+closedPort(ts)+"/v1")
		return
	}
	var replies []reply
	for _, arg := range args {
		r, err := parseReply(arg, ts.ReadFile)
		ts.Check(err)
		replies = append(replies, r)
	}
	logPath := filepath.Join(ts.Getenv("WORK"), "llm-requests.log")
	if err := os.Remove(logPath); err != nil && !os.IsNotExist(err) {
		ts.Fatalf("%v", err)
	}
	srv := newChatServer(replies, logPath)
	ts.Defer(srv.Close)
	ts.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
}

// closedPort is a localhost address where nothing listens.
func closedPort(ts *testscript.TestScript) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	addr := l.Addr().String()
	ts.Check(l.Close())
	return addr
}

// TestFlushWithAHangingServerKeepsToItsBudget asks a server that never answers: the
// flush must end within its budget, with the template's message.
func TestFlushWithAHangingServerKeepsToItsBudget(t *testing.T) {
	dir := t.TempDir()
	srv := newChatServer([]reply{{hang: true}}, "")
	defer srv.Close()
	mustAgmem(t, dir, "", "init", ".")
	mustAgmem(t, dir, observations(3, 2, "h"), "record", "--jsonl")
	env := []string{"OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL=" + srv.URL + "/v1",
		"AGMEM_LLM_TIMEOUT=1s"}
	start := time.Now()
	if _, err := agmem(t, dir, env, "", "flush"); err != nil {
		t.Fatal(err)
	}
	const budget, grace, slack = time.Second, time.Second, 2 * time.Second
	if elapsed := time.Since(start); elapsed > budget+grace+slack {
		t.Errorf("flush took %s with a budget of %s", elapsed, budget)
	}
	models := strings.Fields(git(t, dir, "log", "--format=%(trailers:key=Agmem-Message-Model,valueonly)"))
	if !slices.Equal(models, []string{"template", "template"}) {
		t.Errorf("messages written by %q; want the template for both commits", models)
	}
}
