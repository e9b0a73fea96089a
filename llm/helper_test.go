package llm

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agmem/agmem/memory"
)

// fakeHelper writes a shell script standing in for agmem-llm, in a directory of its own.
func fakeHelper(t *testing.T, script string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake helpers are shell scripts")
	}
	path := filepath.Join(t.TempDir(), HelperName)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func settings(helper string) Settings {
	return Settings{APIKey: "sk-test-0123456789abcdef", BaseURL: "http://127.0.0.1:1/v1", Model: "m1",
		Budget: 5 * time.Second, Helper: helper}
}

var twoCommits = [][]memory.Observation{many(2, "Bash"), many(1, "Read")}

func TestFindHelper(t *testing.T) {
	helper := fakeHelper(t, "")
	t.Setenv("PATH", filepath.Dir(helper))
	if got, err := FindHelper(""); err != nil || got != helper {
		t.Errorf(`FindHelper("") with it on $PATH = %q, %v; want %q`, got, err, helper)
	}
	other := fakeHelper(t, "")
	if got, err := FindHelper(other); err != nil || got != other {
		t.Errorf("FindHelper(%q) = %q, %v; the configured one wins", other, got, err)
	}
	if _, err := FindHelper(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, ErrNoHelper) || !strings.Contains(err.Error(), "AGMEM_LLM_HELPER") {
		t.Errorf("a configured helper that is missing gives %v; want ErrNoHelper naming where it was set", err)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := FindHelper(""); !errors.Is(err, ErrNoHelper) {
		t.Errorf(`FindHelper("") with none anywhere = %v; want ErrNoHelper`, err)
	}

	// The one beside the running program (here the test binary) comes before $PATH's.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	beside := filepath.Join(filepath.Dir(self), HelperName)
	if err := os.WriteFile(beside, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Skipf("cannot put a helper beside the test binary: %v", err)
	}
	defer os.Remove(beside)
	t.Setenv("PATH", filepath.Dir(helper))
	if got, err := FindHelper(""); err != nil || got != beside {
		t.Errorf(`FindHelper("") = %q, %v; want the one beside the program, %q`, got, err, beside)
	}
}

// TestWriteGivesTheKeyOnlyThroughTheEnvironment records what the helper was given: the
// key is in its environment, and neither in its arguments nor in its request.
func TestWriteGivesTheKeyOnlyThroughTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	helper := fakeHelper(t, `echo "$@" > `+dir+`/args; cat > `+dir+`/request; env > `+dir+`/env
printf '%s\n' '{"answers":["Build the parser\n\n- Handle empty input","Read the spec"]}'`)
	s := settings(helper)
	messages, err := s.Write(twoCommits)
	if err != nil {
		t.Fatal(err)
	}
	want := []Message{{"Build the parser", "- Handle empty input", "m1"}, {"Read the spec", "", "m1"}}
	if len(messages) != 2 || messages[0] != want[0] || messages[1] != want[1] {
		t.Errorf("messages = %q, want %q", messages, want)
	}
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	if strings.Contains(read("args")+read("request"), s.APIKey) {
		t.Error("the API key is in the helper's arguments or request")
	}
	if !strings.Contains(read("env"), "OPENAI_API_KEY="+s.APIKey+"\n") {
		t.Error("the helper's environment lacks OPENAI_API_KEY")
	}
	if !strings.Contains(read("request"), `"model":"m1"`) {
		t.Errorf("the request names no model: %s", read("request"))
	}
}

func TestWriteWithoutAKeyStartsNothing(t *testing.T) {
	dir := t.TempDir()
	s := settings(fakeHelper(t, "touch "+dir+"/started"))
	s.APIKey = ""
	messages, err := s.Write(twoCommits)
	if err != nil || len(messages) != 2 || messages[0] != (Message{}) || messages[1] != (Message{}) {
		t.Errorf("Write without a key = %v, %v; want two zero messages", messages, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
		t.Error("the helper was started without an API key")
	}
}

func TestWriteFallsBackOnce(t *testing.T) {
	tests := []struct {
		name     string
		script   string
		template int    // commits left to the template
		message  string // in the one error
		hint     string
	}{
		{"the helper fails", "echo 'no luck with sk-test-0123456789abcdef' >&2; exit 3", 2,
			"exit status 3: no luck with ****", ""},
		{"the helper writes garbage", "echo '<html>'", 2, "unreadable response", ""},
		{"the helper answers the wrong number", `echo '{"answers":["One"]}'`, 2, "1 answers to 2 prompts", ""},
		{"one answer has nothing usable", `echo '{"answers":["Fix it","` + "```" + `"]}'`, 1,
			"no usable commit message", ""},
		{"the server refused", `echo '{"answers":["",""],"failure":{"message":"OpenAI API error: 401 Unauthorized","status":401}}'`, 2,
			"401 Unauthorized", "check the API key"},
		{"the budget ran out", `echo '{"answers":["Fix it",""],"failure":{"message":"no answer within the time budget","timed_out":true}}'`, 1,
			"no answer within the time budget", "raise [llm] timeout"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := settings(fakeHelper(t, tc.script)).Write(twoCommits)
			var f *Fallback
			if !errors.As(err, &f) {
				t.Fatalf("Write = %v; want a *Fallback", err)
			}
			if f.Template != tc.template || f.Asked != 2 || !strings.Contains(f.Error(), tc.message) || !strings.Contains(f.Hint, tc.hint) {
				t.Errorf("Write = %q (hint %q, %d of %d); want %d of 2 with %q (hint %q)",
					f.Error(), f.Hint, f.Template, f.Asked, tc.template, tc.message, tc.hint)
			}
			if strings.Contains(f.Error()+f.Hint, "sk-test-0123456789abcdef") {
				t.Errorf("the error shows the API key: %s", f.Error())
			}
		})
	}
}

// TestWriteKillsAHelperThatOverrunsTheBudget starts a helper that never answers: Write
// must give up on it by the budget and a grace, whatever it does meanwhile.
func TestWriteKillsAHelperThatOverrunsTheBudget(t *testing.T) {
	s := settings(fakeHelper(t, "sleep 30"))
	s.Budget = 100 * time.Millisecond
	start := time.Now()
	_, err := s.Write(twoCommits)
	var f *Failure
	if !errors.As(err, &f) || !f.TimedOut {
		t.Errorf("Write = %v; want a timed-out failure", err)
	}
	if elapsed := time.Since(start); elapsed > s.Budget+grace+2*time.Second {
		t.Errorf("Write took %s for a budget of %s", elapsed, s.Budget)
	}
}
