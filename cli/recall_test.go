package cli_test

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agmem/agmem/recall"
	"github.com/agmem/agmem/recall/recalltest"
)

// demoSession is the sample Claude Code session the demo records, as hook payloads.
func demoSession(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("demo", "claude-code-session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestMCPServeToARealClient has the TypeScript SDK's stdio client, from npm, read a
// memory repo through "agmem mcp serve" as an agent does: the tools, a search, the
// timeline around its first hit, that hit whole, the sessions, and a bad query.
func TestMCPServeToARealClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed, so the real MCP client cannot run; scripts/test.sh installs it")
	}
	npm, _ := filepath.Abs(npmDir)
	if _, err := os.Stat(filepath.Join(npm, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Fatalf("the npm packages are not installed: run \"npm ci\" in %s (scripts/test.sh does)", npm)
	}
	dir := t.TempDir()
	repo := filepath.Join(dir, "memory")
	mustAgmem(t, dir, "", "init", repo)
	mustAgmem(t, repo, demoSession(t), "record", "--jsonl")
	mustAgmem(t, repo, "", "flush")
	// and one still pending
	mustAgmem(t, repo, "", "record", "--session", "later", "--tool", "Bash", "--arg", "command=npm run lint -- --fix",
		"--result", "fixed src/rss.ts:2:1 (max-len) by breaking the long line in two")

	cmd := exec.Command(node, filepath.Join(npm, "memory-client.mjs"), "lint", "--", "agmem", "--repo", repo, "mcp", "serve")
	cmd.Env = gitEnv(dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the client: %v\n%s", err, stderr.String())
	}
	type answer struct {
		Text    string
		IsError bool
	}
	var got struct {
		Tools                               []string
		Instructions                        string
		First                               string
		Search, Timeline, Observations, Bad answer
		Sessions                            answer
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the client printed %s: %v", out, err)
	}
	if want := []string{"get_observations", "search", "sessions", "timeline"}; !slices.Equal(got.Tools, want) {
		t.Errorf("tools %v, want %v", got.Tools, want)
	}
	if !strings.Contains(got.Instructions, "search") || !strings.Contains(got.Instructions, "timeline") {
		t.Errorf("instructions: %q", got.Instructions)
	}
	for name, a := range map[string]answer{"search": got.Search, "timeline": got.Timeline,
		"get_observations": got.Observations, "sessions": got.Sessions} {
		if a.IsError || a.Text == "" {
			t.Errorf("%s: %+v", name, a)
		}
	}
	// Every hit cites its commit and file, or says it is pending.
	lines := strings.Split(strings.TrimSpace(got.Search.Text), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "2 hit(s)") {
		t.Fatalf("search: %q", got.Search.Text)
	}
	for _, l := range lines[1:] {
		if !strings.Contains(l, "[commit ") && !strings.Contains(l, "[pending") || !strings.Contains(l, "**lint**") {
			t.Errorf("a hit that cites nothing or marks nothing: %q", l)
		}
	}
	if !strings.Contains(got.Search.Text, "[pending: not in a commit yet]") || !strings.Contains(got.Search.Text, "current/episodic/") {
		t.Errorf("search does not cite both the pending and the committed call: %q", got.Search.Text)
	}
	if !strings.Contains(got.Timeline.Text, "> "+got.First) {
		t.Errorf("timeline does not mark %s: %q", got.First, got.Timeline.Text)
	}
	if !strings.Contains(got.Observations.Text, "arguments:") || !strings.Contains(got.Observations.Text, got.First) {
		t.Errorf("get_observations: %q", got.Observations.Text)
	}
	if !strings.Contains(got.Sessions.Text, "0b7e4d2c-8a31-4f6e-b5c9-1d2e3f4a5b6c") || !strings.Contains(got.Sessions.Text, "later") {
		t.Errorf("sessions: %q", got.Sessions.Text)
	}
	if !got.Bad.IsError || !strings.Contains(got.Bad.Text, "not closed") {
		t.Errorf("a bad query: %+v", got.Bad)
	}
}

// TestIndexAfterKills kills a flush between its commit and its index's update, and a
// reader in the middle of an update: search then finds every observation exactly once,
// each committed one cited with its commit.
func TestIndexAfterKills(t *testing.T) {
	for _, point := range []string{"flush-before-index", "index-midway"} {
		t.Run(point, func(t *testing.T) {
			dir := t.TempDir()
			mustAgmem(t, dir, "", "init", ".")
			ids := lines(mustAgmem(t, dir, observations(30, 3, "a"), "record", "--jsonl"))
			mustAgmem(t, dir, "", "flush")
			ids = append(ids, lines(mustAgmem(t, dir, observations(12, 2, "b"), "record", "--jsonl"))...)
			_, err := agmem(t, dir, []string{"AGMEM_FAILPOINT=" + point}, "", "flush")
			if err == nil || !strings.Contains(err.Error(), "killed") {
				t.Fatalf("flush with failpoint %s was not killed: %v", point, err)
			}
			if point == "flush-before-index" {
				// a reader killed while it brings the index up to date, too
				if _, err := agmem(t, dir, []string{"AGMEM_FAILPOINT=index-midway"}, "", "search", "read_file"); err == nil {
					t.Fatal("the search was not killed")
				}
			}
			seen := map[string]int{}
			for _, l := range strings.Split(strings.TrimSpace(mustAgmem(t, dir, "", "search", "--json", "--limit", "1000", "read_file")), "\n") {
				var h struct{ ID, Commit string }
				if err := json.Unmarshal([]byte(l), &h); err != nil {
					t.Fatalf("%v: %s", err, l)
				}
				seen[h.ID]++
				if h.Commit == "" {
					t.Errorf("%s is cited as pending, but it was flushed", h.ID)
				}
			}
			for _, id := range ids {
				if seen[id] != 1 {
					t.Errorf("%s found %d times, want once", id, seen[id])
				}
			}
			if len(seen) != len(ids) {
				t.Errorf("%d found, %d recorded", len(seen), len(ids))
			}
		})
	}
}

// TestShowDrivesNoTerminal: agmem show prints a recorded result's escape sequences and
// carriage returns as escapes, not as what a terminal would act on.
func TestShowDrivesNoTerminal(t *testing.T) {
	dir := t.TempDir()
	repo := filepath.Join(dir, "memory")
	mustAgmem(t, dir, "", "init", repo)
	mustAgmem(t, repo, "", "record", "--session", "s", "--tool", "Bash", "--arg", "command=make \u009b31m",
		"--result", "all clean\x1b[2J\x1b]52;c;aGk=\x07 and hidden\roverwritten, and more words to keep it")
	id := strings.Fields(mustAgmem(t, repo, "", "search", "clean"))[0]
	out := mustAgmem(t, repo, "", "show", id)
	if strings.ContainsAny(out, "\x1b\x07\r\u009b") || !strings.Contains(out, `all clean\x1b[2J\x1b]52;c;aGk=\a and hidden\roverwritten`) ||
		!strings.Contains(out, `make \u009b31m`) {
		t.Errorf("show: %q", out)
	}
	// Nor does a session's id that an older agmem took with an override in it (agmem
	// refuses such an id now), in show or the sessions' table: it shows its escape.
	recordAsAnOlderAgmem(t, repo, "s\u202etxt.exe", "make reversed")
	id = strings.Fields(mustAgmem(t, repo, "", "search", "reversed"))[0]
	if out := mustAgmem(t, repo, "", "show", id); strings.Contains(out, "\u202e") || !strings.Contains(out, `session:  s\u202etxt.exe`) {
		t.Errorf("show: %q", out)
	}
	if out := mustAgmem(t, repo, "", "sessions"); strings.Contains(out, "\u202e") || !strings.Contains(out, `s\u202etxt.exe `) {
		t.Errorf("sessions: %q", out)
	}
	// Nor in status, replay, flush or audit; and audit's line keeps a run of spaces.
	mustAgmem(t, repo, "", "record", "--session", "fix  bug", "--tool", "Bash", "--arg", "command=make",
		"--result", "built every package of the module without a single warning")
	for _, args := range [][]string{{"status"}, {"replay", "--session", "s\u202etxt.exe"}, {"flush"}, {"audit"}} {
		out := mustAgmem(t, repo, "", args...)
		if strings.Contains(out, "\u202e") || !strings.Contains(out, `s\u202etxt.exe`) {
			t.Errorf("%s: %q", args[0], out)
		}
		if args[0] == "audit" && !strings.Contains(out, "session fix  bug (") {
			t.Errorf("audit: %q", out)
		}
	}
}

// TestContextSaysTheIndexIsBehind: agmem context that answers before its index has read
// what is new says so on stderr, where its block alone would look like all there is.
func TestContextSaysTheIndexIsBehind(t *testing.T) {
	// Not t.TempDir: the agmem index context starts in the background may still be
	// ending when the test does.
	dir, err := os.MkdirTemp("", "agmem-behind-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	mustAgmem(t, dir, "", "init", ".")
	mustAgmem(t, dir, "", "record", "--session", "first", "--cwd", dir, "--tool", "Bash", "--arg", "command=make heron",
		"--result", "the heron target ran every test of the project, and all of them passed")
	mustAgmem(t, dir, "", "flush")
	release := recalltest.HoldWriteLock(t, filepath.Join(dir, ".agmem"))
	mustAgmem(t, dir, "", "record", "--session", "later", "--cwd", dir, "--tool", "Bash", "--arg", "command=make egret",
		"--result", "the egret target ran every test of the project, and all of them passed")
	context := func() (string, string) {
		t.Helper()
		cmd, out, errb := agmemCommand(dir, []string{"AGMEM_CONTEXT_BUDGET=300ms"}, "", "context", "--project", dir)
		if err := cmd.Run(); err != nil {
			t.Fatalf("agmem context: %v: %s", err, errb)
		}
		return out.String(), errb.String()
	}
	if _, stderr := context(); !strings.Contains(stderr, "the search index is behind the memory") {
		t.Errorf("agmem context while its index is held said nothing of it: %q", stderr)
	}
	release()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if out, stderr := context(); stderr == "" && strings.Contains(out, "make egret") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the index was not brought up to date in the background")
		}
	}
}

// TestMCPServeStartsWhileTheIndexCatchesUp: agmem mcp serve answers at once while its
// index cannot be brought up to date (another update holds it, as a rebuild after a
// clone or an upgrade does), and its calls say the index is catching up; the agmem
// index it started in the background takes in what was new once the index is free.
func TestMCPServeStartsWhileTheIndexCatchesUp(t *testing.T) {
	dir := t.TempDir()
	mustAgmem(t, dir, "", "init", ".")
	mustAgmem(t, dir, observations(3, 1, "a"), "record", "--jsonl")
	mustAgmem(t, dir, "", "flush")
	db, err := sql.Open("sqlite", filepath.Join(dir, ".agmem", recall.IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	entries := func() (n int) {
		t.Helper()
		if err := db.QueryRow("SELECT count(*) FROM entries").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := entries()
	release := recalltest.HoldWriteLock(t, filepath.Join(dir, ".agmem"))
	mustAgmem(t, dir, "", "record", "--session", "later", "--tool", "Bash", "--arg", "command=make kingfisher",
		"--result", "the kingfisher target ran every test of the project, and all of them passed")

	cmd := exec.Command("agmem", "mcp", "serve")
	cmd.Dir, cmd.Env = dir, gitEnv(dir)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		in.Close()
		cmd.Process.Kill()
		cmd.Wait()
	}()
	answers := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			answers <- sc.Text()
		}
		close(answers)
	}()
	// Not a measure of speed: a server that waited for the index would wait for the
	// other update, or its busy timeout of 10 s.
	ask := func(message string) string {
		t.Helper()
		io.WriteString(in, message+"\n")
		select {
		case a := <-answers:
			return a
		case <-time.After(8 * time.Second):
			t.Fatalf("no answer to %s within 8 s", message)
			return ""
		}
	}
	ask(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	got := ask(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"kingfisher"}}}`)
	if !strings.Contains(got, "the index is still catching up") || !strings.Contains(got, `0 hit(s)`) {
		t.Errorf("a search while the index is held: %s", got)
	}
	release()
	for deadline := time.Now().Add(20 * time.Second); entries() == before; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("nothing brought the index up to date in the background")
		}
	}
	// The server, which lives on, reaps the agmem index it started once it ends.
	children := func() string {
		t.Helper()
		lists, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", cmd.Process.Pid))
		if len(lists) == 0 {
			t.Skip("this kernel does not list a process's children")
		}
		var kids []byte
		for _, l := range lists {
			b, _ := os.ReadFile(l) // a thread may be gone
			kids = append(kids, b...)
		}
		return strings.TrimSpace(string(kids))
	}
	for deadline := time.Now().Add(20 * time.Second); children() != ""; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the server's children after 20 s: %s", children())
		}
	}
}

// TestSearchSaysWhyItWaits: agmem search answers whole however long the index takes to
// catch up (here, another update holds it for two seconds), and past a second says on
// stderr why it waits.
func TestSearchSaysWhyItWaits(t *testing.T) {
	dir := t.TempDir()
	mustAgmem(t, dir, "", "init", ".")
	mustAgmem(t, dir, "", "record", "--session", "s", "--tool", "Bash", "--arg", "command=make kingfisher",
		"--result", "the kingfisher target ran every test of the project, and all of them passed")
	mustAgmem(t, dir, "", "index")
	release := recalltest.HoldWriteLock(t, filepath.Join(dir, ".agmem"))
	mustAgmem(t, dir, "", "record", "--session", "s", "--tool", "Bash", "--arg", "command=make heron",
		"--result", "the heron target ran after the other update took the index, and passed too")
	cmd, out, errb := agmemCommand(dir, nil, "", "search", "heron")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	release()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %s", err, errb)
	}
	if !strings.Contains(out.String(), "make heron") || !strings.Contains(errb.String(), "bringing the search index up to date first") {
		t.Errorf("stdout %q\nstderr %q", out, errb)
	}
}

// TestSearchSaysWhenTheIndexIsHeldLong: while another update holds the index past its
// busy timeout (10 s), agmem search answers from the index as it is, and says so.
func TestSearchSaysWhenTheIndexIsHeldLong(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustAgmem(t, dir, "", "init", ".")
	mustAgmem(t, dir, "", "record", "--session", "s", "--tool", "Bash", "--arg", "command=make kingfisher",
		"--result", "the kingfisher target ran every test of the project, and all of them passed")
	mustAgmem(t, dir, "", "index")
	recalltest.HoldWriteLock(t, filepath.Join(dir, ".agmem"))
	mustAgmem(t, dir, "", "record", "--session", "s", "--tool", "Bash", "--arg", "command=make heron",
		"--result", "the heron target ran after the other update took the index, and passed too")
	cmd, out, errb := agmemCommand(dir, nil, "", "search", "kingfisher OR heron")
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, errb)
	}
	if !strings.Contains(out.String(), "make kingfisher") || strings.Contains(out.String(), "make heron") ||
		!strings.Contains(errb.String(), "agmem: the index is still catching up") {
		t.Errorf("stdout %q\nstderr %q", out, errb)
	}
}

// TestContextOfTheRepositoryAroundTheStart: an agent started in a subdirectory of a
// git repository is told of the repository's sessions at its start, as a person who
// runs agmem context there is.
func TestContextOfTheRepositoryAroundTheStart(t *testing.T) {
	dir := t.TempDir()
	repo, project := filepath.Join(dir, "memory"), filepath.Join(dir, "shop")
	mustAgmem(t, dir, "", "init", repo)
	git(t, dir, "init", "-q", project)
	if err := os.MkdirAll(filepath.Join(project, "src", "cart"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustAgmem(t, repo, "", "record", "--session", "before", "--cwd", project, "--tool", "Bash", "--arg", "command=npm test",
		"--result", "every test of the shop passed, the cart's included, in 4.2 seconds")
	mustAgmem(t, repo, "", "flush")
	byHand := mustAgmem(t, filepath.Join(project, "src", "cart"), "", "--repo", repo, "context")
	if !strings.Contains(byHand, "ran npm test") {
		t.Fatalf("agmem context in the project's subdirectory:\n%s", byHand)
	}
	start, _ := json.Marshal(map[string]string{"hook_event_name": "SessionStart", "session_id": "new",
		"cwd": filepath.Join(project, "src", "cart"), "source": "startup"})
	for _, bin := range []string{"agmem", "agmem-record"} {
		cmd := exec.Command(bin, "context", "--agent", "claude", "--repo", repo)
		cmd.Dir, cmd.Env, cmd.Stdin = dir, gitEnv(dir), bytes.NewReader(start)
		out, err := cmd.Output()
		if err != nil || string(out) != byHand {
			t.Errorf("%s context at the start of a session in %s: %v\n%s\nwant what agmem context there gives:\n%s", bin, filepath.Join("shop", "src", "cart"), err, out, byHand)
		}
	}
	// A shell in a link to the project (macOS's /tmp, a ~/code on another volume) names
	// it by the link ($PWD), where the agent recorded where it worked with the link
	// resolved: context and search there find the project all the same.
	link := filepath.Join(t.TempDir(), "shop-link")
	if err := os.Symlink(project, link); err != nil {
		t.Fatal(err)
	}
	inLink := filepath.Join(link, "src", "cart")
	if out, err := agmem(t, inLink, []string{"PWD=" + inLink}, "", "--repo", repo, "context"); err != nil || out != byHand {
		t.Errorf("agmem context in a link to the project's subdirectory: %v\n%s", err, out)
	}
	if out, err := agmem(t, dir, nil, "", "--repo", repo, "search", "npm", "--project", link); err != nil || !strings.Contains(out, "npm test") {
		t.Errorf("agmem search --project by a link to it: %v\n%s", err, out)
	}
	// A session recorded where the link names it, and one where it resolves, are both
	// of the project --project names by the link, as search finds them.
	mustAgmem(t, repo, "", "record", "--session", "by-link", "--cwd", link, "--tool", "Bash", "--arg", "command=npm run lint",
		"--result", "the linter found nothing to say of the shop's cart, in 1.1 seconds")
	if out, err := agmem(t, dir, nil, "", "--repo", repo, "context", "--project", link); err != nil || !strings.Contains(out, "ran npm test") ||
		!strings.Contains(out, "ran npm run lint") {
		t.Errorf("agmem context --project by a link to it: %v\n%s", err, out)
	}
	// A session an older agmem took under an id agmem refuses now, resumed: its start
	// is told of its project all the same (and nothing is recorded in it).
	resumed, _ := json.Marshal(map[string]string{"hook_event_name": "SessionStart", "session_id": " padded ",
		"cwd": filepath.Join(project, "src", "cart"), "source": "resume"})
	cmd := exec.Command("agmem-record", "context", "--agent", "claude", "--repo", repo)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, gitEnv(dir), bytes.NewReader(resumed)
	if out, err := cmd.Output(); err != nil || string(out) != byHand {
		t.Errorf("agmem-record context at the start of a resumed session of a refused id: %v\n%s", err, out)
	}
	// A home that is a repository (of its dotfiles) is no project of the directories in
	// it: a start in ~/scratch is told of nothing.
	git(t, dir, "init", "-q", dir)
	if err := os.MkdirAll(filepath.Join(dir, "scratch"), 0o755); err != nil {
		t.Fatal(err)
	}
	homeLink := filepath.Join(t.TempDir(), "home") // a home named by a link to it
	if err := os.Symlink(dir, homeLink); err != nil {
		t.Fatal(err)
	}
	for _, home := range []string{dir, dir + "/", homeLink} {
		if out, err := agmem(t, filepath.Join(dir, "scratch"), []string{"HOME=" + home}, "", "--repo", repo, "context"); err != nil || out != "" {
			t.Errorf("agmem context in ~/scratch, ~ (%s) a repository: %v\n%s", home, err, out)
		}
	}
}
