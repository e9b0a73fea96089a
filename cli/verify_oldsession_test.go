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
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	p, err := journal.Prepare(memory.Entry{Observation: &memory.Observation{ID: memory.NewID(at), SessionID: " padded ",
		Timestamp: at, ToolName: "Bash", MemoryType: memory.Episodic, Arguments: json.RawMessage(`{"command":"make"}`),
		Result: json.RawMessage(`"built every package of the module without a warning"`)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := journal.At(filepath.Join(repo, ".agmem")).Append([]journal.Prepared{p}, journal.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
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
