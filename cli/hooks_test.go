package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstalledClaudeHookRecordsFromAnywhere is the end-to-end check of issue 5: an
// agmem at a path with a space and a quote installs its hooks for Claude Code, recording
// into a memory repo whose path has both kinds of quote; the PostToolUse command is taken
// from the written settings and run through sh -c from another directory, as Claude Code
// runs it, with a real PostToolUse payload on stdin; the observation is then in the
// memory repo. Run when the memory repo is gone, the same command fails with 1, not the 2
// that Claude Code reads as "block". With agmem-record beside agmem, as "go install .
// ./cmd/..." puts it, the hooks run agmem-record, and all of this holds as well; not an
// agmem-record of another build, which may be older than the journal.
func TestInstalledClaudeHookRecordsFromAnywhere(t *testing.T) {
	t.Run("agmem alone", func(t *testing.T) { installedClaudeHook(t, "", "tools/agmem' record --agent claude --repo ") })
	t.Run("agmem-record beside it", func(t *testing.T) { installedClaudeHook(t, "same", "tools/agmem-record' --agent claude --repo ") })
	t.Run("agmem-record of another build beside it", func(t *testing.T) {
		installedClaudeHook(t, "other", "tools/agmem' record --agent claude --repo ")
	})
}

// installedClaudeHook runs the story with beside agmem nothing (""), agmem-record of
// the same build ("same"), or agmem-record built with other flags ("other").
func installedClaudeHook(t *testing.T, beside, runs string) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "ana's tools", "agmem")
	repo := filepath.Join(dir, `ana's "agent" memory`)
	project, elsewhere := filepath.Join(dir, "blog"), filepath.Join(dir, "somewhere else")
	for _, d := range []string{filepath.Dir(bin), project, elsewhere} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	linkAgmemAt(t, bin)
	record := filepath.Join(filepath.Dir(bin), "agmem-record")
	switch beside {
	case "same":
		linkAgmemAt(t, record)
	case "other":
		buildOtherRecord(t, record)
	}
	run := func(wd, stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env, cmd.Stdin = wd, append(gitEnv(dir), "CLAUDE_CONFIG_DIR="), strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("agmem %s: %v: %s", strings.Join(args, " "), err, hookStderr(err))
		}
		return string(out)
	}
	run(dir, "", "init", repo)
	run(project, "", "hooks", "install", "claude", "--scope", "project", "--repo", repo)

	settings, err := os.ReadFile(filepath.Join(project, ".claude", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var written struct {
		Hooks map[string][]struct {
			Hooks []struct{ Command string }
		}
	}
	if err := json.Unmarshal(settings, &written); err != nil {
		t.Fatal(err)
	}
	command := written.Hooks["PostToolUse"][0].Hooks[0].Command
	if !strings.Contains(command, runs) {
		t.Fatalf("the PostToolUse hook runs %q, not this agmem", command)
	}

	hook := exec.Command("sh", "-c", command)
	hook.Dir, hook.Env, hook.Stdin = elsewhere, gitEnv(elsewhere), strings.NewReader(claudeSamplePayload(t, "PostToolUse"))
	out, err := hook.Output()
	if err != nil || len(out) != 0 {
		t.Fatalf("the hook: %v, stdout %q: %s", err, out, hookStderr(err))
	}
	var status struct {
		Pending int `json:"pending_observations"`
	}
	if err := json.Unmarshal([]byte(run(repo, "", "status", "--json")), &status); err != nil || status.Pending != 1 {
		t.Fatalf("after the hook ran, the memory repo has %d pending observations (%v), want 1", status.Pending, err)
	}
	if flushed := run(repo, "", "flush"); !strings.Contains(flushed, " 1 observations") {
		t.Fatalf("flush committed %q", flushed)
	}

	if err := os.Rename(repo, repo+" moved"); err != nil {
		t.Fatal(err)
	}
	hook = exec.Command("sh", "-c", command)
	hook.Dir, hook.Env, hook.Stdin = elsewhere, gitEnv(elsewhere), strings.NewReader(claudeSamplePayload(t, "PostToolUse"))
	var exit *exec.ExitError
	if err := hook.Run(); !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("the hook with its memory repo gone: %v, want exit status 1", err)
	}

	if beside == "same" { // agmem alone upgraded: the hooks' agmem-record is of another build
		buildOtherRecord(t, record)
		if out := run(project, "", "hooks", "status"); !strings.Contains(out, "agmem-record: not known to be of this agmem's build") {
			t.Errorf("hooks status, the hooks' agmem-record of another build:\n%s", out)
		}
	}
}

// buildOtherRecord builds agmem-record at path with flags of its own: a build other
// than the agmem under test.
func buildOtherRecord(t *testing.T, path string) {
	t.Helper()
	os.Remove(path)
	build := exec.Command("go", "build", "-ldflags=-s", "-o", path, "github.com/agmem/agmem/cmd/agmem-record")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build agmem-record: %v\n%s", err, out)
	}
}

// linkAgmemAt puts the agmem under test at path (a hard link, else a copy), so that the
// hooks it installs name that path. Named agmem-record, it is agmem-record.
func linkAgmemAt(t *testing.T, path string) {
	t.Helper()
	agmem, err := exec.LookPath("agmem")
	if err != nil {
		t.Fatal(err)
	}
	if os.Link(agmem, path) == nil {
		return
	}
	data, err := os.ReadFile(agmem)
	if err == nil {
		err = os.WriteFile(path, data, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// claudeSamplePayload is the first line of the sample Claude Code session for a hook event.
func claudeSamplePayload(t *testing.T, event string) string {
	t.Helper()
	f, err := os.Open(filepath.Join("demo", "claude-code-session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if bytes.Contains(sc.Bytes(), []byte(`"hook_event_name": "`+event+`"`)) {
			return sc.Text()
		}
	}
	t.Fatalf("no %s payload in the sample session", event)
	return ""
}

func hookStderr(err error) string {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(exit.Stderr)
	}
	return ""
}
