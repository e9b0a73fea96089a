package cli_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// sshAgentCmd starts a real ssh-agent for the rest of a script, on a socket in $WORK,
// and points SSH_AUTH_SOCK at it; the agent is killed when the script ends.
func sshAgentCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: ssh-agent")
	}
	sock := filepath.Join(ts.Getenv("WORK"), "agent.sock")
	agent := exec.Command("ssh-agent", "-D", "-a", sock)
	ts.Check(agent.Start())
	ts.Defer(func() {
		agent.Process.Kill()
		agent.Wait()
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			ts.Fatalf("ssh-agent made no socket at %s within 10s", sock)
		}
	}
	ts.Setenv("SSH_AUTH_SOCK", sock)
}

// TestDaemonLogsCommitsLeftUnsigned: best effort, the daemon's flush commits what it
// cannot sign, and its log says why.
func TestDaemonLogsCommitsLeftUnsigned(t *testing.T) {
	dir := t.TempDir()
	mustAgmem(t, dir, "", "init", ".")
	git(t, dir, "config", "commit.gpgSign", "true")
	git(t, dir, "config", "gpg.format", "ssh")
	git(t, dir, "config", "user.signingKey", filepath.Join(dir, "no-such-key"))
	startDaemon(t, dir, nil, "--max-pending", "1")
	ids := lines(mustAgmem(t, dir, observations(2, 1, "a"), "record", "--jsonl"))
	waitFor(t, "the daemon to flush", func() bool { return batches(t, dir) == 1 })
	mustAgmem(t, dir, "", "daemon", "stop")
	checkExactlyOnce(t, dir, ids)
	log, _ := os.ReadFile(filepath.Join(dir, ".agmem", "daemon.log"))
	if !bytes.Contains(log, []byte(`commits left unsigned ([audit] sign is best effort): read signing key: open `)) {
		t.Errorf("the daemon's log does not say the commit is unsigned:\n%s", log)
	}
}
