package cli_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// daemonReport is what the tests read of `agmem daemon status --json`.
type daemonReport struct {
	Running  bool `json:"running"`
	PID      int  `json:"pid"`
	Pending  int  `json:"pending_observations"`
	Counters struct {
		Recorded int `json:"recorded"`
		Flushes  int `json:"flushes"`
	} `json:"counters"`
}

func daemonStatus(t *testing.T, dir string) daemonReport {
	t.Helper()
	var r daemonReport
	if err := json.Unmarshal([]byte(mustAgmem(t, dir, "", "daemon", "status", "--json")), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

var startedPID = regexp.MustCompile(`pid (\d+)`)

// startDaemon starts the daemon of dir with extra environment and flags, and makes sure
// it is gone when the test ends.
func startDaemon(t *testing.T, dir string, env []string, args ...string) int {
	t.Helper()
	out, err := agmem(t, dir, env, "", append([]string{"daemon", "start"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	m := startedPID.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("daemon start printed %q, want its pid", out)
	}
	pid, _ := strconv.Atoi(m[1])
	t.Cleanup(func() {
		if r := daemonStatus(t, dir); r.Running && r.PID == pid {
			syscall.Kill(pid, syscall.SIGKILL)
			waitFor(t, "the daemon killed at the end of the test to be gone", func() bool { return !daemonStatus(t, dir).Running })
		}
	})
	return pid
}

// waitFor polls cond for up to 10 s: the daemon acts within a second or two.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10s for %s", what)
		}
	}
}

// batches is how many flush commits the branch holds.
func batches(t *testing.T, dir string) int {
	return len(lines(git(t, dir, "log", "--format=%(trailers:key=Agmem-Batch,valueonly)")))
}

// TestDaemonFlushesBySizeAndOnItsInterval: with [daemon] max_pending = 5 the fifth
// observation makes a commit; after SIGHUP the daemon reads interval = "1s" from the
// file again and flushes two observations by the clock alone.
func TestDaemonFlushesBySizeAndOnItsInterval(t *testing.T) {
	dir := t.TempDir()
	mustAgmem(t, dir, "", "init", ".")
	config := filepath.Join(dir, ".agmem", "config.toml")
	if err := os.WriteFile(config, []byte("[daemon]\ninterval = \"1h\"\nmax_pending = 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pid := startDaemon(t, dir, nil)

	ids := lines(mustAgmem(t, dir, observations(4, 1, "a"), "record", "--jsonl"))
	time.Sleep(time.Second) // two of the daemon's looks at the backlog
	if n := batches(t, dir); n != 0 {
		t.Fatalf("%d flushes with 4 of 5 observations pending", n)
	}
	ids = append(ids, lines(mustAgmem(t, dir, observations(1, 1, "b"), "record", "--jsonl"))...)
	waitFor(t, "a flush at max_pending", func() bool { return batches(t, dir) == 1 })

	if err := os.WriteFile(config, []byte("[daemon]\ninterval = \"1s\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	ids = append(ids, lines(mustAgmem(t, dir, observations(2, 1, "c"), "record", "--jsonl"))...)
	waitFor(t, "a flush on the interval read again", func() bool { return batches(t, dir) == 2 })
	if got := git(t, dir, "log", "-1", "--format=%(trailers:key=Agmem-Observations,valueonly)"); strings.TrimSpace(got) != "2" {
		t.Errorf("the interval's flush committed %s observations, want 2", got)
	}
	mustAgmem(t, dir, "", "daemon", "stop")
	checkExactlyOnce(t, dir, ids)
}

// TestRecordBesideADaemonThatFlushesOften: records from several processes meet no
// lock errors while the daemon flushes every 5 observations, and each ends in one
// commit.
func TestRecordBesideADaemonThatFlushesOften(t *testing.T) {
	dir := t.TempDir()
	mustAgmem(t, dir, "", "init", ".")
	startDaemon(t, dir, nil, "--max-pending", "5", "--interval", "1s")
	const writers, perWriter = 4, 15
	results := make(chan []string)
	failures := make(chan error, writers*perWriter)
	for w := range writers {
		go func() {
			var ids []string
			for i := range perWriter {
				out, err := agmem(t, dir, nil, observations(1, 1, fmt.Sprintf("w%d-%d", w, i)), "record")
				if err != nil {
					failures <- err
				}
				ids = append(ids, lines(out)...)
				time.Sleep(30 * time.Millisecond) // records go on over several of the daemon's flushes
			}
			results <- ids
		}()
	}
	var ids []string
	for range writers {
		ids = append(ids, <-results...)
	}
	close(failures)
	for err := range failures {
		t.Error(err)
	}
	// How many flushes ran while records went on depends on the machine's load; that
	// the size trigger fires at max_pending is tested step by step elsewhere.
	waitFor(t, "the daemon to flush all", func() bool { return daemonStatus(t, dir).Pending == 0 })
	mustAgmem(t, dir, "", "daemon", "stop")
	checkExactlyOnce(t, dir, ids)
}

// watchedLine is a native observation in session "w" whose path names it.
func watchedLine(name string) string {
	return fmt.Sprintf(`{"tool_name":"read_file","arguments":{"path":%q},"result":"%s","session_id":"w"}`+"\n",
		name, strings.Repeat("r", 60))
}

func appendTo(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// watchedIDs returns the ids of session "w" in the journal, and fails the test unless
// it holds each of names exactly once.
func watchedIDs(t *testing.T, dir string, names ...string) []string {
	t.Helper()
	var ids []string
	seen := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(mustAgmem(t, dir, "", "replay", "--json", "--session", "w")), "\n") {
		var o struct {
			ID        string            `json:"id"`
			Arguments map[string]string `json:"arguments"`
		}
		if err := json.Unmarshal([]byte(l), &o); err != nil {
			t.Fatalf("replay line %q: %v", l, err)
		}
		ids = append(ids, o.ID)
		seen[o.Arguments["path"]]++
	}
	for _, n := range names {
		if seen[n] != 1 {
			t.Errorf("line %s recorded %d times, want once", n, seen[n])
		}
	}
	if len(ids) != len(names) {
		t.Errorf("recorded %d lines, want %d: %v", len(ids), len(names), seen)
	}
	return ids
}

// TestDaemonFollowsWatchedFiles appends to a watched file, a line in two writes, then
// truncates it, replaces it as log rotation does, and writes to it while the daemon is
// stopped: each line is recorded once, none skipped.
func TestDaemonFollowsWatchedFiles(t *testing.T) {
	dir := t.TempDir()
	mustAgmem(t, dir, "", "init", ".")
	watched := filepath.Join(t.TempDir(), "events.jsonl")
	args := []string{"--watch", watched, "--interval", "1h", "--max-pending", "1000"}
	startDaemon(t, dir, nil, args...)
	recorded := func(n int) func() bool {
		return func() bool { return daemonStatus(t, dir).Counters.Recorded == n }
	}

	a3 := watchedLine("a3")
	appendTo(t, watched, watchedLine("a1")+watchedLine("a2")+a3[:20])
	waitFor(t, "two appended lines recorded", recorded(2))
	appendTo(t, watched, a3[20:])
	waitFor(t, "a line completed later recorded", recorded(3))

	if err := os.WriteFile(watched, []byte(watchedLine("b1")), 0o644); err != nil { // truncated
		t.Fatal(err)
	}
	waitFor(t, "the line of a truncated file recorded", recorded(4))

	rotated := watched + ".new"
	if err := os.WriteFile(rotated, []byte(watchedLine("c1")+watchedLine("c2")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(rotated, watched); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the lines of a replacing file recorded", recorded(6))
	mustAgmem(t, dir, "", "daemon", "stop")

	// Written while no daemon runs: the next one reads on from where the last stopped.
	appendTo(t, watched, watchedLine("d1"))
	startDaemon(t, dir, nil, args...)
	waitFor(t, "a line written while stopped recorded", recorded(1))
	mustAgmem(t, dir, "", "daemon", "stop")

	// Replaced while no daemon runs (the file system may give it the same inode).
	if err := os.Remove(watched); err != nil {
		t.Fatal(err)
	}
	appendTo(t, watched, watchedLine("e1"))
	startDaemon(t, dir, nil, args...)
	waitFor(t, "the line of a file replaced while stopped recorded", recorded(1))
	mustAgmem(t, dir, "", "daemon", "stop")

	ids := watchedIDs(t, dir, "a1", "a2", "a3", "b1", "c1", "c2", "d1", "e1")
	checkExactlyOnce(t, dir, ids)
}

// TestDaemonKilledMidwayRecoversExactlyOnce kills the daemon (SIGKILL, at a named
// point) while it flushes, or while it records a watched file, and starts it again:
// every observation ends in exactly one commit, every watched line recorded once.
func TestDaemonKilledMidwayRecoversExactlyOnce(t *testing.T) {
	for _, point := range []string{"flush-after-ref", "materialize-midway", "append-midway"} {
		t.Run(point, func(t *testing.T) {
			dir := t.TempDir()
			mustAgmem(t, dir, "", "init", ".")
			ids := lines(mustAgmem(t, dir, observations(12, 3, "a"), "record", "--jsonl"))
			watched := filepath.Join(t.TempDir(), "events.jsonl")
			appendTo(t, watched, watchedLine("w1")+watchedLine("w2")+watchedLine("w3"))
			args := []string{"--watch", watched, "--interval", "1h", "--max-pending", "5"}

			startDaemon(t, dir, []string{"AGMEM_FAILPOINT=" + point}, args...)
			waitFor(t, "the daemon to be killed at "+point, func() bool { return !daemonStatus(t, dir).Running })
			if state, err := os.ReadFile(filepath.Join(dir, ".agmem", "daemon.json")); err != nil || bytes.Contains(state, []byte("stopped_at")) {
				t.Fatalf("the daemon stopped rather than being killed at %s: %v\n%s", point, err, state)
			}
			startDaemon(t, dir, nil, args...)
			waitFor(t, "the watched lines recorded", func() bool {
				out, _ := agmem(t, dir, nil, "", "replay", "--json", "--session", "w")
				return strings.Count(out, "\n") >= 3
			})
			mustAgmem(t, dir, "", "daemon", "stop")
			checkExactlyOnce(t, dir, append(ids, watchedIDs(t, dir, "w1", "w2", "w3")...))
		})
	}
}

// TestDaemonRunInTheForeground: `agmem daemon run` logs to stderr, keeps start from
// starting a second daemon, and on SIGINT flushes and exits 0.
func TestDaemonRunInTheForeground(t *testing.T) {
	dir := t.TempDir()
	mustAgmem(t, dir, "", "init", ".")
	cmd := exec.Command("agmem", "daemon", "run", "--interval", "1h")
	cmd.Dir, cmd.Env = dir, gitEnv(dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Running once it holds its lock; its pid is known once it has written its state
	// file, just after.
	waitFor(t, "daemon run to be running", func() bool {
		r := daemonStatus(t, dir)
		return r.Running && r.PID == cmd.Process.Pid
	})

	if _, err := agmem(t, dir, nil, "", "daemon", "start"); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("already running (pid %d)", cmd.Process.Pid)) {
		t.Errorf("daemon start beside daemon run: %v, want already running with its pid", err)
	}
	ids := lines(mustAgmem(t, dir, observations(3, 1, "a"), "record", "--jsonl"))
	cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("daemon run after SIGINT: %v\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("daemon run did not exit within 10s of SIGINT")
	}
	for _, want := range []string{"msg=started", "msg=flushed trigger=stop commits=1 observations=3", "msg=stopped"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	checkExactlyOnce(t, dir, ids)
}

// TestDaemonStopsWhenItsLockFileIsGone: a daemon whose repo was deleted (or whose
// lock file was) no longer keeps a second one out, so it stops by itself.
func TestDaemonStopsWhenItsLockFileIsGone(t *testing.T) {
	dir := t.TempDir()
	mustAgmem(t, dir, "", "init", ".")
	pid := startDaemon(t, dir, nil, "--interval", "1h")
	if err := os.Remove(filepath.Join(dir, ".agmem", "daemon.lock")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the daemon to stop", func() bool { return exited(pid) })
}

// exited is true once process pid is gone or a zombie (that init has not reaped yet).
func exited(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	}
	// pid (comm) state …: comm may hold spaces and parentheses, so read past the last ")".
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) > 0 && fields[0] == "Z"
}
