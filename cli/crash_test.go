package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// agmem runs the agmem command in dir with extra environment, returning its stdout.
func agmem(t *testing.T, dir string, env []string, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd, out, errb := agmemCommand(dir, env, stdin, args...)
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("agmem %s: %w: %s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), err
}

// agmemCommand is the agmem command in dir with extra environment, not started yet, and
// the buffers its stdout and stderr go to.
func agmemCommand(dir string, env []string, stdin string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	cmd := exec.Command("agmem", args...)
	cmd.Dir = dir
	cmd.Env = append(gitEnv(dir), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	return cmd, &out, &errb
}

func mustAgmem(t *testing.T, dir string, stdin string, args ...string) string {
	t.Helper()
	out, err := agmem(t, dir, nil, stdin, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func gitEnv(dir string) []string {
	return append(exec.Command("true").Environ(), "HOME="+dir, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "AGMEM_REPO=", "AGMEM_SESSION=", "AGMEM_FAILPOINT=",
		"OPENAI_API_KEY=", "AGMEM_LLM_API_KEY=") // a key of the person running the tests must not reach a server
}

// observations makes n native observations spread over sessions, one JSON line each.
func observations(n, sessions int, tag string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `{"tool_name":"read_file","arguments":{"path":"%s-%d.md"},"result":"%s","session_id":"s%d"}`+"\n",
			tag, i, strings.Repeat("x", 60), i%sessions)
	}
	return b.String()
}

func lines(s string) []string { return strings.Fields(s) }

func uniq(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// TestFlushKilledAtAnyPointLosesAndDuplicatesNothing kills a flush at each of its
// named points, records more, flushes again, and checks that every observation is in
// exactly one commit and the repo is clean; the commits are signed, and agmem audit
// finds each signed and in the journal's ledger once, in order. Batches hold at most 4
// entries: each session is flushed as several commits, in rounds of one batch, and a
// kill between rounds falls between two batches of one session.
func TestFlushKilledAtAnyPointLosesAndDuplicatesNothing(t *testing.T) {
	points := []string{"flush-after-intent", "commit-before-ref", "flush-after-ref", "flush-after-mark",
		"materialize-midway", "materialize-before-index", "flush-before-finish", "flush-between-rounds"}
	key := filepath.Join(t.TempDir(), "key")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	allowed := filepath.Join(filepath.Dir(key), "allowed")
	if err := os.WriteFile(allowed, append([]byte("agmem@localhost "), pub...), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, point := range points {
		t.Run(point, func(t *testing.T) {
			dir := t.TempDir()
			mustAgmem(t, dir, "", "init", ".")
			git(t, dir, "config", "gpg.format", "ssh")
			git(t, dir, "config", "user.signingKey", key)
			git(t, dir, "config", "gpg.ssh.allowedSignersFile", allowed)
			if err := os.WriteFile(filepath.Join(dir, ".agmem", "config.toml"), []byte("[audit]\nsign = \"required\"\n[flush]\nmax_batch = 4\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			ids := lines(mustAgmem(t, dir, observations(30, 3, "a"), "record", "--jsonl"))

			_, err := agmem(t, dir, []string{"AGMEM_FAILPOINT=" + point}, "", "flush")
			if err == nil || !strings.Contains(err.Error(), "killed") {
				t.Fatalf("flush with failpoint %s was not killed: %v", point, err)
			}
			ids = append(ids, lines(mustAgmem(t, dir, observations(5, 2, "b"), "record", "--jsonl"))...)
			mustAgmem(t, dir, "", "flush")
			checkExactlyOnce(t, dir, ids)
			// 3 sessions of 10 and 2 sessions' 5 more: at least 9 + 2 commits, each its own batch.
			batches := lines(git(t, dir, "log", "--format=%(trailers:key=Agmem-Batch,valueonly)"))
			if len(batches) < 11 || len(batches) != len(uniq(batches)) {
				t.Errorf("batches of the commits: %q; want at least 11, each once", batches)
			}
			var report struct {
				Ledger  int `json:"ledger"`
				Commits []struct {
					Signature struct{ Status string } `json:"signature"`
					InLedger  bool                    `json:"in_ledger"`
				} `json:"commits"`
			}
			if err := json.Unmarshal([]byte(mustAgmem(t, dir, "", "audit", "--json")), &report); err != nil {
				t.Fatal(err)
			}
			if report.Ledger != len(report.Commits) {
				t.Errorf("the ledger holds %d commits, the branch %d", report.Ledger, len(report.Commits))
			}
			for i, c := range report.Commits {
				if c.Signature.Status != "good" || !c.InLedger {
					t.Errorf("commit %d: signature %s, in the ledger %v", i, c.Signature.Status, c.InLedger)
				}
			}
		})
	}
}

// committed reads back what the branch holds: how often each observation id stands in
// a markdown file's frontmatter and in a session record, and the sum of the commits'
// Agmem-Observations trailers.
func committed(t *testing.T, dir string) (inMarkdown, inRecords map[string]int, trailerTotal int) {
	t.Helper()
	inMarkdown, inRecords = map[string]int{}, map[string]int{}
	out, err := exec.Command("git", "-C", dir, "grep", "-h", "^observation_id:", "HEAD", "--", "current").Output()
	if err != nil && len(out) > 0 {
		t.Fatalf("git grep: %v", err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if l != "" {
			inMarkdown[strings.Trim(strings.TrimPrefix(l, "observation_id: "), `"`)]++
		}
	}
	records, err := exec.Command("git", "-C", dir, "grep", "-h", "^{\"observation\"", "HEAD", "--", "sessions").Output()
	if err != nil && len(records) > 0 {
		t.Fatalf("git grep: %v", err)
	}
	for _, l := range strings.Split(string(records), "\n") {
		if l == "" {
			continue
		}
		var e struct {
			Observation struct {
				ID string `json:"id"`
			} `json:"observation"`
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("session record line %.80q: %v", l, err)
		}
		inRecords[e.Observation.ID]++
	}
	for _, v := range lines(git(t, dir, "log", "--format=%(trailers:key=Agmem-Observations,valueonly)")) {
		n, _ := strconv.Atoi(v)
		trailerTotal += n
	}
	return inMarkdown, inRecords, trailerTotal
}

// checkRepoSettled asserts that nothing is pending and git finds the repo whole and clean.
func checkRepoSettled(t *testing.T, dir string) {
	t.Helper()
	git(t, dir, "fsck", "--strict")
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("git status --porcelain is not empty:\n%s", st)
	}
	var status struct {
		Pending int `json:"pending_observations"`
	}
	if err := json.Unmarshal([]byte(mustAgmem(t, dir, "", "status", "--json")), &status); err != nil {
		t.Fatal(err)
	}
	if status.Pending != 0 {
		t.Errorf("%d observations still pending", status.Pending)
	}
}

// checkExactlyOnce asserts what FORMAT.md §Commits promises after a flush: each id in exactly one
// committed markdown file and one session record line, trailers that add up, nothing
// pending, git fsck clean, and a clean worktree and index.
func checkExactlyOnce(t *testing.T, dir string, ids []string) {
	t.Helper()
	checkRepoSettled(t, dir)
	inMarkdown, inRecords, total := committed(t, dir)
	for _, id := range ids {
		if inMarkdown[id] != 1 || inRecords[id] != 1 {
			t.Errorf("observation %s: in %d markdown files and %d session records, want 1 and 1", id, inMarkdown[id], inRecords[id])
		}
	}
	if len(inMarkdown) != len(ids) || len(inRecords) != len(ids) {
		t.Errorf("committed %d markdown files and %d record lines for %d recorded observations", len(inMarkdown), len(inRecords), len(ids))
	}
	if total != len(ids) {
		t.Errorf("Agmem-Observations trailers add up to %d, want %d", total, len(ids))
	}
}

// TestRecordAndFlushConcurrently runs record processes while flushes run, and checks
// nothing is lost or duplicated and no process fails with a lock error.
func TestRecordAndFlushConcurrently(t *testing.T) {
	dir := t.TempDir()
	mustAgmem(t, dir, "", "init", ".")
	type result struct {
		ids []string
		err error
	}
	results := make(chan result)
	const writers, perWriter = 4, 15
	for w := 0; w < writers; w++ {
		go func(w int) {
			var r result
			for i := 0; i < perWriter && r.err == nil; i++ {
				var out string
				out, r.err = agmem(t, dir, nil, observations(1, 1, fmt.Sprintf("w%d-%d", w, i)), "record", "--session", fmt.Sprintf("w%d", w))
				r.ids = append(r.ids, lines(out)...)
			}
			results <- r
		}(w)
	}
	flushes := make(chan error)
	go func() {
		for i := 0; i < 5; i++ {
			if _, err := agmem(t, dir, nil, "", "flush"); err != nil {
				flushes <- err
				return
			}
		}
		flushes <- nil
	}()
	var ids []string
	for w := 0; w < writers; w++ {
		r := <-results
		if r.err != nil {
			t.Fatal(r.err)
		}
		ids = append(ids, r.ids...)
	}
	if err := <-flushes; err != nil {
		t.Fatal(err)
	}
	mustAgmem(t, dir, "", "flush")
	if len(ids) != writers*perWriter {
		t.Fatalf("recorded %d ids, want %d", len(ids), writers*perWriter)
	}
	checkExactlyOnce(t, dir, ids)
}

// TestLargeRecordKilled kills a record --jsonl large enough to be stored in parts: once
// a part is stored, nothing of it is seen; once its parts are visible and not yet merged
// into the journal's indexes, all of it is. Either way verify finds the journal whole,
// and the same lines recorded again are each committed once.
func TestLargeRecordKilled(t *testing.T) {
	// 12 MB of results that do not compress: more than one part (recorder.stagePart).
	rnd := rand.New(rand.NewPCG(1, 2))
	var input strings.Builder
	for i := 0; i < 6000; i++ {
		result := make([]byte, 1024)
		for k := range result {
			result[k] = byte(rnd.Uint32())
		}
		fmt.Fprintf(&input, `{"tool_name":"Read","tool_use_id":"toolu_%d","arguments":{"file_path":"f%d.go"},"result":"%x","session_id":"big"}`+"\n", i, i, result)
	}
	for _, point := range []string{"staged-part", "staging-committed"} {
		t.Run(point, func(t *testing.T) {
			dir := t.TempDir()
			mustAgmem(t, dir, "", "init", dir)
			out, err := agmem(t, dir, []string{"AGMEM_FAILPOINT=" + point}, input.String(), "record", "--jsonl")
			if err == nil || out != "" {
				t.Fatalf("record killed at %s: err %v, stdout %q", point, err, out)
			}
			if point == "staged-part" {
				checkRepoSettled(t, dir) // nothing pending
			}
			mustAgmem(t, dir, "", "verify")

			ids := lines(mustAgmem(t, dir, input.String(), "record", "--jsonl"))
			if point == "staging-committed" {
				// Recorded by the record killed, which had not printed the ids yet.
				if len(ids) != 0 {
					t.Fatalf("record again printed %d ids, want none", len(ids))
				}
				replayed := strings.TrimSpace(mustAgmem(t, dir, "", "replay", "--session", "big", "--json"))
				for _, line := range strings.Split(replayed, "\n") {
					var o struct{ ID string }
					if err := json.Unmarshal([]byte(line), &o); err != nil {
						t.Fatal(err)
					}
					ids = append(ids, o.ID)
				}
			}
			if len(ids) != 6000 {
				t.Fatalf("%d entries recorded, want 6000", len(ids))
			}
			if out := mustAgmem(t, dir, input.String(), "record", "--jsonl"); out != "" {
				t.Fatalf("the same lines again printed %d ids, want none", len(lines(out)))
			}
			mustAgmem(t, dir, "", "verify")
			mustAgmem(t, dir, "", "flush", "--no-llm")
			checkExactlyOnce(t, dir, ids)
		})
	}
}
