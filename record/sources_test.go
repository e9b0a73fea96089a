package record_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agmem/agmem/capture"
	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/journal"
	"github.com/agmem/agmem/mcp"
	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/record"
)

// call is one tool call as every source can give it: a Read of path in directory cwd,
// answered with result, in session "s1" (else session) as call "toolu_1", at a time of
// its own.
type call struct {
	cwd, path, result string
	session           string
}

func (c call) sessionID() string { return cmp.Or(c.session, "s1") }

var callTime = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// nativeLine is c as a native observation, one line of JSONL.
func (c call) nativeLine() string {
	line, _ := json.Marshal(map[string]any{"session_id": c.sessionID(), "tool_use_id": "toolu_1", "cwd": c.cwd,
		"timestamp": callTime.Format(time.RFC3339Nano), "tool_name": "Read",
		"arguments": map[string]string{"file_path": c.path}, "result": c.result})
	return string(line) + "\n"
}

// file is a new file that holds c's native line.
func (c call) file(t *testing.T) string {
	f := filepath.Join(t.TempDir(), "calls.jsonl")
	if err := os.WriteFile(f, []byte(c.nativeLine()), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// source gives c to agmem as one source does, once, in a process whose environment
// getenv reads; it may fail, as that source fails on such input.
type source struct {
	name string
	give func(t *testing.T, repo string, getenv func(string) string, c call) error
}

var sources = []source{
	{"hook payload", func(t *testing.T, repo string, getenv func(string) string, c call) error {
		payload, _ := json.Marshal(map[string]any{"hook_event_name": "PostToolUse", "session_id": c.sessionID(),
			"tool_use_id": "toolu_1", "cwd": c.cwd, "tool_name": "Read",
			"tool_input": map[string]string{"file_path": c.path}, "tool_response": c.result})
		return record.Run(env(bytes.NewReader(payload), getenv), repo, record.Flags{})
	}},
	{"record --jsonl", func(t *testing.T, repo string, getenv func(string) string, c call) error {
		return record.Run(env(strings.NewReader(c.nativeLine()), getenv), repo, record.Flags{JSONL: true})
	}},
	{"flags", func(t *testing.T, repo string, getenv func(string) string, c call) error {
		file := filepath.Join(t.TempDir(), "result")
		os.WriteFile(file, []byte(c.result), 0o644)
		return record.Run(env(strings.NewReader(""), getenv), repo, record.Flags{Tool: "Read", Session: c.sessionID(), ToolUseID: "toolu_1",
			Cwd: c.cwd, Args: []string{"file_path=" + c.path}, ResultFile: file})
	}},
	{"mcp proxy", func(t *testing.T, repo string, getenv func(string) string, c call) error {
		r, err := record.Open(repo, record.Options{Session: c.sessionID(), Getenv: getenv})
		if err != nil {
			return err
		}
		result, _ := json.Marshal(c.result)
		args, _ := json.Marshal(map[string]string{"file_path": c.path})
		o := mcp.Call{Method: mcp.ToolsCall, Tool: "Read", Arguments: args, Result: result,
			Started: callTime, Duration: time.Millisecond}.Observation("fs")
		o.Cwd = c.cwd
		return outcome(r.Record(o))
	}},
	{"watched file", func(t *testing.T, repo string, getenv func(string) string, c call) error {
		r, err := record.Open(repo, record.Options{Getenv: getenv})
		if err != nil {
			return err
		}
		// Another file each time: a watched file read again would not be read twice.
		f := c.file(t)
		in, _ := os.Open(f)
		defer in.Close()
		_, out, err := r.Follow(f, in, 0, func(end int64) journal.WatchMark { return journal.WatchMark{Offset: end} })
		return outcome(out, err)
	}},
	{"import", func(t *testing.T, repo string, getenv func(string) string, c call) error {
		r, err := record.Open(repo, record.Options{Getenv: getenv})
		if err != nil {
			return err
		}
		files, err := r.Import([]string{c.file(t)}, nil)
		if err == nil && files[0].NotUnderstood > 0 {
			err = fmt.Errorf("%d not understood", files[0].NotUnderstood)
		}
		return err
	}},
}

func env(stdin io.Reader, getenv func(string) string) record.Env {
	return record.Env{Stdin: stdin, Stdout: new(bytes.Buffer), Stderr: new(bytes.Buffer), Getenv: getenv}
}

// outcome is an error for what a source refused.
func outcome(out record.Outcome, err error) error {
	if err == nil && len(out.Refused) > 0 {
		err = out.Refused[0]
	}
	return err
}

// rule is one thing every source must treat alike: the call, the setting, the
// directory agmem runs in, and what the journal must hold after it.
type rule struct {
	name  string
	setup func(t *testing.T, repo string) (c call, env map[string]string, wd string)
	// times is how often the source gives the call.
	times int
	check func(t *testing.T, recorded []*memory.Observation, failed error)
}

const longResult = "the file's contents, long enough to be worth capturing: package main, func main"

// A GitHub token, made here so that no scanner takes this file for a leak.
var secret = "ghp_" + strings.Repeat("A1b2C3d4E5", 3) + "f6G7h8"

func plain(t *testing.T, repo string) (call, map[string]string, string) {
	return call{cwd: t.TempDir(), path: "main.go", result: longResult}, nil, ""
}

func optedOut(t *testing.T) string {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, capture.OptOutFile), nil, 0o644)
	sub := filepath.Join(dir, "project")
	os.Mkdir(sub, 0o755)
	return sub
}

func nothing(t *testing.T, recorded []*memory.Observation, _ error) {
	if len(recorded) != 0 {
		t.Errorf("%d observations recorded, want none", len(recorded))
	}
}

func one(t *testing.T, recorded []*memory.Observation, failed error) *memory.Observation {
	t.Helper()
	if failed != nil {
		t.Fatalf("failed: %v", failed)
	}
	if len(recorded) != 1 {
		t.Fatalf("%d observations recorded, want one", len(recorded))
	}
	return recorded[0]
}

var rules = []rule{
	{"recorded", plain, 1, func(t *testing.T, recorded []*memory.Observation, failed error) {
		o := one(t, recorded, failed)
		// MCP has no tool_use_id: the proxy's calls are known by their time and content.
		if o.ToolUseID != "toolu_1" && o.Source != mcp.Source || o.SessionID != "s1" || !strings.HasSuffix(o.ToolName, "Read") ||
			!strings.Contains(string(o.Arguments), "main.go") || o.ResultText() != longResult {
			t.Errorf("recorded %+v", o)
		}
	}},
	{"capture disabled", func(t *testing.T, repo string) (call, map[string]string, string) {
		c, _, _ := plain(t, repo)
		return c, map[string]string{"AGMEM_CAPTURE_ENABLED": "false"}, ""
	}, 1, nothing},
	{"opt-out in the working directory", func(t *testing.T, repo string) (call, map[string]string, string) {
		c, _, _ := plain(t, repo)
		return c, nil, optedOut(t)
	}, 1, nothing},
	{"opt-out in the call's cwd", func(t *testing.T, repo string) (call, map[string]string, string) {
		return call{cwd: optedOut(t), path: "main.go", result: longResult}, nil, ""
	}, 1, nothing},
	{"a withheld path", func(t *testing.T, repo string) (call, map[string]string, string) {
		return call{cwd: t.TempDir(), path: "/srv/app/.env", result: "DATABASE_PASSWORD=hunter2hunter2, and more lines of it"}, nil, ""
	}, 1, func(t *testing.T, recorded []*memory.Observation, failed error) {
		o := one(t, recorded, failed)
		if o.Withheld == "" || strings.Contains(o.ResultText(), "hunter2") || !strings.Contains(string(o.Arguments), ".env") {
			t.Errorf("withheld %q, result %q, arguments %s", o.Withheld, o.ResultText(), o.Arguments)
		}
	}},
	{"input over the limit", func(t *testing.T, repo string) (call, map[string]string, string) {
		c, _, _ := plain(t, repo)
		c.result = strings.Repeat("x", 2048)
		return c, map[string]string{"AGMEM_CAPTURE_MAX_INPUT_BYTES": "1024"}, ""
	}, 1, func(t *testing.T, recorded []*memory.Observation, failed error) {
		nothing(t, recorded, failed)
		if failed == nil {
			t.Error("input over the limit passed over without a word")
		}
	}},
	{"a secret", func(t *testing.T, repo string) (call, map[string]string, string) {
		return call{cwd: t.TempDir(), path: "deploy.sh", result: "export GITHUB_TOKEN=" + secret + " # the deploy script's token"}, nil, ""
	}, 1, func(t *testing.T, recorded []*memory.Observation, failed error) {
		o := one(t, recorded, failed)
		if strings.Contains(o.ResultText(), secret) || o.Redactions == 0 {
			t.Errorf("the secret is kept: %q (%d redactions)", o.ResultText(), o.Redactions)
		}
	}},
	{"a secret in the session id", func(t *testing.T, repo string) (call, map[string]string, string) {
		return call{cwd: t.TempDir(), path: "main.go", result: longResult, session: "deploy " + secret}, nil, ""
	}, 2, func(t *testing.T, recorded []*memory.Observation, failed error) {
		// redacted as the same id each time: the session's calls stay one session's, once
		o := one(t, recorded, failed)
		if !regexp.MustCompile(`^deploy \[REDACTED:github-pat\]-[0-9a-f]{8}$`).MatchString(o.SessionID) {
			t.Errorf("session id %q", o.SessionID)
		}
	}},
	{"a secret at the end of a long session id", func(t *testing.T, repo string) (call, map[string]string, string) {
		return call{cwd: t.TempDir(), path: "main.go", result: longResult, session: strings.Repeat("s", 160) + " password=Zx9SecretPw77qq"}, nil, ""
	}, 1, func(t *testing.T, recorded []*memory.Observation, failed error) {
		// its mark is longer than what it hides: cut, to stay within the bound
		o := one(t, recorded, failed)
		if len(o.SessionID) > memory.MaxSessionIDLen || strings.Contains(o.SessionID, "Zx9Secret") || !strings.HasPrefix(o.SessionID, strings.Repeat("s", 160)+" password=[REDACTED:") {
			t.Errorf("session id %q", o.SessionID)
		}
	}},
	{"the same input twice", plain, 2, func(t *testing.T, recorded []*memory.Observation, failed error) {
		one(t, recorded, failed)
	}},
}

// TestEverySourceFollowsEveryRule gives the same call to agmem through each source
// under each rule: what the journal holds afterwards must not depend on the source.
func TestEverySourceFollowsEveryRule(t *testing.T) {
	for _, rl := range rules {
		for _, src := range sources {
			t.Run(rl.name+"/"+src.name, func(t *testing.T) {
				repo := t.TempDir()
				if err := os.Mkdir(filepath.Join(repo, ".agmem"), 0o755); err != nil {
					t.Fatal(err)
				}
				c, vars, wd := rl.setup(t, repo)
				getenv := func(k string) string { return vars[k] }
				if wd != "" {
					t.Chdir(wd)
				}
				var failed error
				for range rl.times {
					if err := src.give(t, repo, getenv, c); err != nil {
						failed = err
					}
				}
				rl.check(t, observations(t, repo), failed)
			})
		}
	}
}

// observations are every observation the repo's journal holds.
func observations(t *testing.T, repo string) []*memory.Observation {
	t.Helper()
	j := journal.At(filepath.Join(repo, ".agmem"))
	sessions, err := j.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	var out []*memory.Observation
	for _, s := range sessions {
		err := j.Timeline(s.ID, func(e memory.Entry) error {
			if e.Observation != nil {
				out = append(out, e.Observation)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestRefusalsQuoteNoSecret: what refuses a part of the input may quote it (a
// timestamp, an id that is none), and is printed, and kept in the daemon's log: a
// secret in it is redacted there too, whole or cut short, its hint kept.
func TestRefusalsQuoteNoSecret(t *testing.T) {
	const minQuoted = 8 // the shortest start of a secret a refusal hides
	repo := t.TempDir()
	if err := os.Mkdir(filepath.Join(repo, ".agmem"), 0o755); err != nil {
		t.Fatal(err)
	}
	getenv := func(string) string { return "" }
	for _, tc := range []struct {
		name, input string
		flags       record.Flags
	}{
		{"a payload's timestamp", `{"tool_name":"Read","arguments":{},"result":"` + longResult + `","timestamp":"` + secret + `"}`, record.Flags{}},
		{"a line's id", `{"tool_name":"Read","arguments":{},"result":"` + longResult + `","id":"` + secret + `"}` + "\n", record.Flags{JSONL: true}},
		// quoted cut at 40 bytes, where its rule no longer finds it
		{"a line's id, cut short", `{"tool_name":"Read","arguments":{},"result":"` + longResult + `","id":"id-` + secret + `"}` + "\n", record.Flags{JSONL: true}},
		{"a payload's session id, cut short", `{"tool_name":"Read","arguments":{},"result":"` + longResult + `","session_id":"s ` + secret + `\u0001"}`, record.Flags{}},
	} {
		e := env(strings.NewReader(tc.input), getenv)
		err := record.Run(e, repo, tc.flags)
		said := e.Stderr.(*bytes.Buffer).String()
		if err != nil {
			said += err.Error() + "\n" + hint.For(err)
		}
		if err == nil || strings.Contains(said, secret[:minQuoted]) || !strings.Contains(said, "[REDACTED:github-pat]") {
			t.Errorf("%s: %v, said %q", tc.name, err, said)
		}
		if tc.name == "a payload's timestamp" && !strings.Contains(hint.For(err), "give a native object") {
			t.Errorf("%s: the hint is lost: %q", tc.name, hint.For(err))
		}
	}
}
