package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agmem/agmem/internal/testcmd"
)

// TestMain makes this test binary double as the agmem and agmem-record commands: scripts
// and tests run them as real processes, so exits, signals and kills are real.
func TestMain(m *testing.M) {
	testscript.Main(m, testcmd.Commands())
}

// TestScripts runs the stories in testdata/script: each is what a user would do, checked
// with the real git CLI.
func TestScripts(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("these tests check agmem's commits with the git CLI: install git")
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv("GIT_AUTHOR_NAME", "Ana Test")
			env.Setenv("GIT_AUTHOR_EMAIL", "ana@example.com")
			env.Setenv("GIT_COMMITTER_NAME", "Ana Test")
			env.Setenv("GIT_COMMITTER_EMAIL", "ana@example.com")
			env.Setenv("AGMEM_REPO", "")
			env.Setenv("AGMEM_SESSION", "")
			return copySamples(env.WorkDir)
		},
		Cmds: map[string]func(*testscript.TestScript, bool, []string){"llm-server": llmServerCmd, "ssh-agent": sshAgentCmd},
	})
}

// copySamples puts the shared sample payloads beside each script as samples/.
func copySamples(dir string) error {
	data, err := os.ReadFile(filepath.Join("demo", "claude-code-session.jsonl"))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "samples"), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "samples", "claude-code-session.jsonl"), data, 0o644)
}
