package cli_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agmem/agmem/internal/flock"
)

// TestRecordWhileAnotherHoldsTheJournal: records that another process keeps from the
// journal (a gc compacting a year's journal holds it for seconds, past the 10 s an
// agent gives its hook) return anyway, their calls kept aside and acknowledged, while
// the lock is still held; status tells of them; a record killed after adding them to
// the journal and before clearing them leaves them to the next write, the flush, which
// commits each once.
func TestRecordWhileAnotherHoldsTheJournal(t *testing.T) {
	dir := t.TempDir()
	mustAgmem(t, dir, "", "init", ".")
	held, err := flock.Acquire(filepath.Join(dir, ".agmem", "journal.lock"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	hook := exec.Command("agmem-record")
	hook.Dir, hook.Env, hook.Stdin = dir, gitEnv(dir), strings.NewReader(observations(1, 1, "hook"))
	out, err := hook.Output()
	if err != nil {
		t.Fatalf("agmem-record while the journal is held: %v: %s", err, hookStderr(err))
	}
	ids := lines(string(out))
	ids = append(ids, lines(mustAgmem(t, dir, observations(3, 2, "jsonl"), "record", "--jsonl"))...)
	held.Release()
	if len(ids) != 4 {
		t.Fatalf("recorded %q while the journal was held, want 4 ids", ids)
	}

	var status struct {
		Pending int `json:"pending_observations"`
		Spooled *struct {
			Waiting, Refused int
		} `json:"spooled"`
	}
	readStatus := func() {
		t.Helper()
		status.Spooled = nil
		if err := json.Unmarshal([]byte(mustAgmem(t, dir, "", "status", "--json")), &status); err != nil {
			t.Fatal(err)
		}
	}
	readStatus()
	if status.Pending != 0 || status.Spooled == nil || status.Spooled.Waiting != 2 || status.Spooled.Refused != 0 {
		t.Errorf("status after two records kept aside: %d pending, spooled %+v; want 0 and 2 waiting", status.Pending, status.Spooled)
	}
	if text := mustAgmem(t, dir, "", "status"); !strings.Contains(text, "kept aside: 2 call(s)") {
		t.Errorf("status does not tell of the calls kept aside:\n%s", text)
	}

	_, err = agmem(t, dir, []string{"AGMEM_FAILPOINT=spool-appended"}, observations(1, 1, "killed"), "record")
	if err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("record with failpoint spool-appended was not killed: %v", err)
	}
	readStatus()
	if status.Pending != 1 || status.Spooled == nil || status.Spooled.Waiting != 2 {
		t.Errorf("status after a record killed between adding a spooled call and clearing it: %d pending, spooled %+v; want 1 and 2 waiting", status.Pending, status.Spooled)
	}
	mustAgmem(t, dir, "", "flush")
	checkExactlyOnce(t, dir, ids)
	if readStatus(); status.Spooled != nil {
		t.Errorf("status after the flush: spooled %+v", status.Spooled)
	}
}
