package cli_test

import (
	"strings"
	"testing"
)

// TestReplayAfterGCAndResume forgets a committed session with gc, records into it
// again (a resumed agent), and replays it whole: what git holds, then what is new.
func TestReplayAfterGCAndResume(t *testing.T) {
	dir := t.TempDir()
	mustAgmem(t, dir, "", "init")
	old := `{"tool_name":"read_file","arguments":{"path":"%s"},"result":"` + strings.Repeat("r", 60) + `","session_id":"S1","timestamp":"2020-01-02T03:04:0%sZ"}` + "\n"
	mustAgmem(t, dir, strings.ReplaceAll(strings.Replace(old, "%s", "old-a.md", 1), "%s", "1")+
		strings.ReplaceAll(strings.Replace(old, "%s", "old-b.md", 1), "%s", "2"), "record", "--jsonl")
	mustAgmem(t, dir, "", "flush")
	mustAgmem(t, dir, "", "gc", "--keep", "1h")
	mustAgmem(t, dir, "", "record", "--session", "S1", "--tool", "read_file", "--arg", "path=new.md", "--result", strings.Repeat("n", 60))
	replay := mustAgmem(t, dir, "", "replay", "--session", "S1", "--json")
	for _, path := range []string{"old-a.md", "old-b.md", "new.md"} {
		if !strings.Contains(replay, path) {
			t.Errorf("replay after gc and a resumed session lacks %s:\n%s", path, replay)
		}
	}
	if n := strings.Count(replay, "\n"); n != 3 {
		t.Errorf("replay shows %d observations, want 3:\n%s", n, replay)
	}
	mustAgmem(t, dir, "", "flush")
	if n := strings.Count(mustAgmem(t, dir, "", "replay", "--session", "S1", "--json"), "\n"); n != 3 {
		t.Errorf("after the new one is committed too, replay shows %d, want 3", n)
	}
}
