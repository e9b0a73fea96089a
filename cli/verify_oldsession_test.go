package cli_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agmem/agmem/journal"
	"github.com/agmem/agmem/memory"
)

// TestRepairOfAnOlderSessionName: a session an older agmem took with white space at an
// end is committed under a trailer that names it trimmed, and the flush says so; verify
// reports it, and verify --repair fails, as one line and a hint each time: never an
// internal error.
func TestRepairOfAnOlderSessionName(t *testing.T) {
	dir := t.TempDir()
	repo := filepath.Join(dir, "memory")
	mustAgmem(t, dir, "", "init", repo)
	recordAsAnOlderAgmem(t, repo, " padded ", "make")
	cmd, _, stderr := agmemCommand(repo, nil, "", "flush")
	if err := cmd.Run(); err != nil || !strings.Contains(stderr.String(), `session " padded ": its commit's Agmem-Session trailer cannot name it as it is`) {
		t.Errorf("flush: %v\n%s", err, stderr)
	}
	for range 2 {
		_, err := agmem(t, repo, nil, "", "verify", "--repair")
		if err == nil || strings.Contains(err.Error(), "internal error") || !strings.Contains(err.Error(), "exit status 1") {
			t.Errorf("verify --repair: %v", err)
		}
	}
}

// recordAsAnOlderAgmem records a call of command in session as an older agmem did,
// straight into the journal: it took session ids that agmem refuses now.
func recordAsAnOlderAgmem(t *testing.T, repo, session, command string) {
	t.Helper()
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	args, _ := json.Marshal(map[string]string{"command": command})
	p, err := journal.Prepare(memory.Entry{Observation: &memory.Observation{ID: memory.NewID(at), SessionID: session,
		Timestamp: at, ToolName: "Bash", MemoryType: memory.Episodic, Arguments: args,
		Result: json.RawMessage(`"built every package of the module without a warning"`)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := journal.At(filepath.Join(repo, ".agmem")).Append([]journal.Prepared{p}, journal.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
}
