package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agmem/agmem/memory"
)

const testKey = "sk-test-0123456789abcdef"

// chatServer is an OpenAI chat-completions server on 127.0.0.1 whose handler answers
// each request, given its body; it keeps every request's Authorization header and body.
type chatServer struct {
	*httptest.Server
	mu       sync.Mutex
	auth     []string
	bodies   []string
	answered int
}

func newChatServer(t *testing.T, answer func(w http.ResponseWriter, r *http.Request, body string)) *chatServer {
	t.Helper()
	s := &chatServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		s.bodies = append(s.bodies, string(body))
		s.answered++
		s.mu.Unlock()
		answer(w, r, string(body))
	}))
	t.Cleanup(s.Close)
	return s
}

// completion writes a chat completion whose message is content.
func completion(w http.ResponseWriter, content string) {
	text, _ := json.Marshal(content)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m1",`+
		`"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":%s}}]}`, text)
}

func settings(s *chatServer) Settings {
	return Settings{APIKey: testKey, BaseURL: s.URL + "/v1", Model: "m1", Budget: 5 * time.Second}
}

var twoCommits = [][]memory.Observation{many(2, "Bash"), many(1, "Read")}

// TestWriteSendsTheKeyOnlyToTheServer asks for two messages: each comes back cleaned,
// and the key went as the bearer token, never in a request's body.
func TestWriteSendsTheKeyOnlyToTheServer(t *testing.T) {
	srv := newChatServer(t, func(w http.ResponseWriter, _ *http.Request, _ string) {
		completion(w, "Build the parser\n\n- Handle empty input")
	})
	messages, err := settings(srv).Write(twoCommits)
	if err != nil {
		t.Fatal(err)
	}
	want := Message{"Build the parser", "- Handle empty input", "m1"}
	if len(messages) != 2 || messages[0] != want || messages[1] != want {
		t.Errorf("messages = %q, want twice %q", messages, want)
	}
	if len(srv.auth) != 2 {
		t.Fatalf("%d requests, want one per commit", len(srv.auth))
	}
	for i, auth := range srv.auth {
		if auth != "Bearer "+testKey {
			t.Errorf("request %d: Authorization %q", i, auth)
		}
		if strings.Contains(srv.bodies[i], testKey) {
			t.Errorf("request %d holds the API key in its body", i)
		}
		if !strings.Contains(srv.bodies[i], `"model":"m1"`) {
			t.Errorf("request %d names no model: %s", i, srv.bodies[i])
		}
	}
}

func TestWriteWithoutAKeyAsksNothing(t *testing.T) {
	srv := newChatServer(t, func(w http.ResponseWriter, _ *http.Request, _ string) { completion(w, "Fix it") })
	s := settings(srv)
	s.APIKey = ""
	messages, err := s.Write(twoCommits)
	if err != nil || len(messages) != 2 || messages[0] != (Message{}) || messages[1] != (Message{}) {
		t.Errorf("Write without a key = %v, %v; want two zero messages", messages, err)
	}
	if srv.answered != 0 {
		t.Errorf("%d requests were sent without an API key", srv.answered)
	}
}

func TestWriteFallsBackOnce(t *testing.T) {
	tests := []struct {
		name     string
		answer   func(w http.ResponseWriter, body string)
		template int    // commits left to the template
		message  string // in the one error
		hint     string
	}{
		{"the server refuses the key", func(w http.ResponseWriter, _ string) {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":{"message":"bad key %s","type":"auth"}}`, testKey)
		}, 2, "401 Unauthorized", "check the API key"},
		{"the server writes garbage", func(w http.ResponseWriter, _ string) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, "<html>")
		}, 2, "", ""},
		{"one answer has nothing usable", func(w http.ResponseWriter, body string) {
			if strings.Contains(body, "Bash") {
				completion(w, "Fix it")
			} else {
				completion(w, "```")
			}
		}, 1, "no usable commit message", ""},
		{"the model is not there", func(w http.ResponseWriter, _ string) {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":{"message":"no such model","type":"test"}}`)
		}, 2, "404 Not Found", `serves the model "m1"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newChatServer(t, func(w http.ResponseWriter, _ *http.Request, body string) { tc.answer(w, body) })
			_, err := settings(srv).Write(twoCommits)
			var f *Fallback
			if !errors.As(err, &f) {
				t.Fatalf("Write = %v; want a *Fallback", err)
			}
			if f.Template != tc.template || f.Asked != 2 || !strings.Contains(f.Error(), tc.message) || !strings.Contains(f.Hint, tc.hint) {
				t.Errorf("Write = %q (hint %q, %d of %d); want %d of 2 with %q (hint %q)",
					f.Error(), f.Hint, f.Template, f.Asked, tc.template, tc.message, tc.hint)
			}
			if strings.Contains(f.Error()+f.Hint, testKey) {
				t.Errorf("the error shows the API key: %s", f.Error())
			}
		})
	}
}

// TestWriteKeepsToTheBudget asks a server that never answers: Write gives up on it by
// the budget, whatever it does meanwhile.
func TestWriteKeepsToTheBudget(t *testing.T) {
	release := make(chan struct{})
	srv := newChatServer(t, func(_ http.ResponseWriter, r *http.Request, _ string) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	s := settings(srv)
	s.Budget = 100 * time.Millisecond
	start := time.Now()
	_, err := s.Write(twoCommits)
	var f *Failure
	if !errors.As(err, &f) || !f.TimedOut {
		t.Errorf("Write = %v; want a timed-out failure", err)
	}
	if elapsed := time.Since(start); elapsed > s.Budget+2*time.Second {
		t.Errorf("Write took %s for a budget of %s", elapsed, s.Budget)
	}
	var fb *Fallback
	if errors.As(err, &fb) && !strings.Contains(fb.Hint, "raise [llm] timeout") {
		t.Errorf("hint %q", fb.Hint)
	}
}
