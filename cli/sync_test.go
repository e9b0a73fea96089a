package cli_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agmem/agmem/render"
)

// TestSync runs what sharing memory through git remotes promises, against real servers
// on loopback: the stories in testdata/sync,
// four repos pushing at once, the daemon's pushes, and a session too big for one file.
func TestSync(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("these tests serve remotes with git http-backend and check them with the git CLI: install git")
	}
	t.Run("stories", func(t *testing.T) {
		testscript.Run(t, testscript.Params{
			Dir:                 "testdata/sync",
			RequireExplicitExec: true,
			Setup: func(e *testscript.Env) error {
				for _, kv := range gitEnv(e.WorkDir) {
					if k, v, ok := strings.Cut(kv, "="); ok && (strings.HasPrefix(k, "GIT_") || strings.HasPrefix(k, "AGMEM_") || k == "HOME") {
						e.Setenv(k, v)
					}
				}
				e.Values[gitServerKey{}] = &gitServer{}
				return copySamples(e.WorkDir)
			},
			Cmds: map[string]func(*testscript.TestScript, bool, []string){"git-http": gitHTTPCmd},
		})
	})
	t.Run("four repos push at once", func(t *testing.T) { testConcurrentPushes(t) })
	t.Run("failures exit 1 with a hint", func(t *testing.T) { testSyncFailures(t) })
	t.Run("the daemon pushes and retries", func(t *testing.T) { testDaemonPushes(t) })
	t.Run("a session too big for one file", func(t *testing.T) { testBigSession(t) })
	t.Run("ssh with a key file", func(t *testing.T) { testSSH(t) })
}

// gitServer serves the bare repositories under root over git's smart HTTP protocol,
// with git http-backend, on 127.0.0.1, to whoever gives user and password.
type gitServer struct {
	root, user, password string
	addr                 string // kept across a stop, so that start listens there again
	srv                  *http.Server
	slowPush             time.Duration // how long each push's upload waits for an answer
}

func (g *gitServer) start() error {
	addr := g.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	g.addr = l.Addr().String()
	g.srv = &http.Server{Handler: g}
	go g.srv.Serve(l)
	return nil
}

func (g *gitServer) stop() {
	if g.srv != nil {
		g.srv.Close()
		g.srv = nil
	}
}

func (g *gitServer) URL() string { return "http://" + g.addr }

func (g *gitServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if user, password, ok := r.BasicAuth(); !ok || user != g.user || password != g.password {
		w.Header().Set("WWW-Authenticate", `Basic realm="memory"`)
		http.Error(w, "who are you?", http.StatusUnauthorized)
		return
	}
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-receive-pack") {
		time.Sleep(g.slowPush)
	}
	gitPath, _ := exec.LookPath("git")
	backend := &cgi.Handler{Path: gitPath, Args: []string{"http-backend"}, InheritEnv: []string{"PATH"},
		Env: []string{"GIT_PROJECT_ROOT=" + g.root, "GIT_HTTP_EXPORT_ALL=1", "REMOTE_USER=" + g.user,
			"GIT_CONFIG_NOSYSTEM=1", "HOME=" + g.root}}
	backend.ServeHTTP(w, r)
}

type gitServerKey struct{}

// gitHTTPCmd is the stories' git-http command: "git-http start DIR USER PASSWORD" serves
// the bare repositories in DIR and sets $GITURL; "git-http stop" stops answering;
// "git-http start" answers again where it did.
func gitHTTPCmd(ts *testscript.TestScript, neg bool, args []string) {
	g := ts.Value(gitServerKey{}).(*gitServer)
	switch {
	case neg || len(args) == 0:
		ts.Fatalf("usage: git-http start [DIR USER PASSWORD] | git-http stop")
	case args[0] == "stop":
		g.stop()
	case args[0] == "start" && len(args) == 4:
		g.root, g.user, g.password = ts.MkAbs(args[1]), args[2], args[3]
		fallthrough
	case args[0] == "start" && g.root != "":
		ts.Check(g.start())
		ts.Defer(g.stop)
		ts.Setenv("GITURL", g.URL())
	default:
		ts.Fatalf("usage: git-http start [DIR USER PASSWORD] | git-http stop")
	}
}

// bareRemote makes a bare repository that takes pushes over HTTP.
func bareRemote(t *testing.T, root, name string) string {
	t.Helper()
	dir := filepath.Join(root, name)
	git(t, root, "init", "-q", "--bare", dir)
	git(t, dir, "config", "http.receivepack", "true")
	return dir
}

// onRemote counts, on every agents/ branch of the bare repository dir, how often each
// observation id stands in a session record, reading it with the git CLI.
func onRemote(t *testing.T, dir string) (ids map[string]int, branches map[string]string) {
	t.Helper()
	ids, branches = map[string]int{}, map[string]string{}
	for _, line := range nonEmpty(git(t, dir, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/")) {
		ref, tip, _ := strings.Cut(line, " ")
		branches[ref] = tip
		out, err := exec.Command("git", "-C", dir, "grep", "-h", `^{"observation"`, ref, "--", "sessions").Output()
		if err != nil && len(out) > 0 { // exit 1 with no output: no session yet
			t.Fatalf("git grep %s: %v", ref, err)
		}
		for _, l := range nonEmpty(string(out)) {
			var e struct {
				Observation struct {
					ID string `json:"id"`
				} `json:"observation"`
			}
			if err := json.Unmarshal([]byte(l), &e); err != nil {
				t.Fatalf("%s: session record line %.80q: %v", ref, l, err)
			}
			ids[e.Observation.ID]++
		}
	}
	return ids, branches
}

func nonEmpty(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// testConcurrentPushes: four memory repos record, flush and push twenty times each, all
// at once, to one remote (two over HTTP, two by file://); then every observation is on
// the remote exactly once, each repo on a branch of its own that is its HEAD.
func testConcurrentPushes(t *testing.T) {
	root := t.TempDir()
	remote := bareRemote(t, root, "memory.git")
	srv := &gitServer{root: root, user: "fleet", password: "s3cret"}
	if err := srv.start(); err != nil {
		t.Fatal(err)
	}
	defer srv.stop()
	env := []string{"AGMEM_SYNC_USERNAME=fleet", "AGMEM_SYNC_PASSWORD=s3cret"}

	const repos, rounds = 4, 20
	dirs := make([]string, repos)
	for i := range dirs {
		dirs[i] = filepath.Join(root, fmt.Sprintf("agent-%d", i))
		mustAgmem(t, root, "", "init", dirs[i])
		url := "file://" + remote // half of them over HTTP, half through the file system
		if i%2 == 1 {
			url = srv.URL() + "/memory.git"
		}
		git(t, dirs[i], "remote", "add", "origin", url)
	}
	var mu sync.Mutex
	var recorded []string
	var wg sync.WaitGroup
	for i, dir := range dirs {
		wg.Go(func() {
			for r := range rounds {
				steps := []struct {
					stdin string
					args  []string
				}{
					{observations(2, 2, fmt.Sprintf("a%d-r%d", i, r)), []string{"record", "--jsonl"}},
					{"", []string{"flush"}},
					{"", []string{"push"}},
				}
				for _, s := range steps {
					out, err := agmem(t, dir, env, s.stdin, s.args...)
					if err != nil {
						t.Errorf("agent %d, round %d: %v", i, r, err)
						return
					}
					if s.args[0] == "record" {
						mu.Lock()
						recorded = append(recorded, lines(out)...)
						mu.Unlock()
					}
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	ids, branches := onRemote(t, remote)
	for _, id := range recorded {
		if ids[id] != 1 {
			t.Errorf("observation %s is on the remote %d times", id, ids[id])
		}
	}
	if len(ids) != repos*rounds*2 || len(recorded) != repos*rounds*2 {
		t.Errorf("%d observations recorded, %d on the remote, want %d", len(recorded), len(ids), repos*rounds*2)
	}
	if len(branches) != repos {
		t.Errorf("the remote has branches %v, want one per repo", branches)
	}
	for _, dir := range dirs {
		head := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
		id, err := os.ReadFile(filepath.Join(dir, ".agmem", "repo-id"))
		if err != nil {
			t.Fatal(err)
		}
		if got := branches["refs/heads/agents/"+strings.TrimSpace(string(id))]; got != head {
			t.Errorf("%s: the remote has %q for its branch, its HEAD is %s", dir, got, head)
		}
	}
	git(t, remote, "fsck", "--strict")
}

// testSyncFailures: a remote that is missing, down, refusing or wants credentials makes
// push and pull exit 1 with one line and a hint, keeping the local commits; a push once
// the remote is back sends them.
func testSyncFailures(t *testing.T) {
	root := t.TempDir()
	bareRemote(t, root, "memory.git")
	srv := &gitServer{root: root, user: "ana", password: "s3cret"}
	if err := srv.start(); err != nil {
		t.Fatal(err)
	}
	defer srv.stop()
	dir := filepath.Join(root, "a")
	mustAgmem(t, root, "", "init", dir)
	mustAgmem(t, dir, observations(3, 1, "a"), "record", "--jsonl")
	mustAgmem(t, dir, "", "flush")
	head := git(t, dir, "rev-parse", "HEAD")
	creds := []string{"AGMEM_SYNC_USERNAME=ana", "AGMEM_SYNC_PASSWORD=s3cret"}
	refusing := bareRemote(t, root, "refusing.git")
	hook := "#!/bin/sh\necho 'memory is read-only here' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(refusing, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name   string
		remote string // "" for none
		env    []string
		args   []string
		line   string
		hint   string
	}{
		{"no remote", "", creds, []string{"push"}, `no remote named "origin"`, "remote add origin URL"},
		{"no repository there", "../missing.git", creds, []string{"pull"}, "pull from origin (../missing.git): repository not found", "git init --bare"},
		{"credentials wanted", srv.URL() + "/memory.git", nil, []string{"push"}, "authentication required", "AGMEM_SYNC_PASSWORD"},
		{"credentials refused", srv.URL() + "/memory.git", []string{"AGMEM_SYNC_PASSWORD=wrong"}, []string{"push"}, "credentials refused", "refused these credentials"},
		{"down", "http://" + closedAddr(t) + "/memory.git", creds, []string{"push"}, "cannot reach it", `nothing is lost: your commits stay here and the next "agmem push" sends them`},
		{"down, pulled from", "http://" + closedAddr(t) + "/memory.git", creds, []string{"pull"}, "cannot reach it", `the next "agmem pull" fetches what is there`},
		{"no ssh agent", "ssh://127.0.0.1:1/x.git", append([]string{"SSH_AUTH_SOCK="}, creds...), []string{"push"}, "SSH_AUTH_SOCK", "ssh-add KEY), or give a key file"},
		{"refusing", refusing, creds, []string{"push"}, "pre-receive hook declined", "the remote refused the update"},
	} {
		exec.Command("git", "-C", dir, "remote", "remove", "origin").Run() // the first time, there is none
		if tc.remote != "" {
			git(t, dir, "remote", "add", "origin", tc.remote)
		}
		_, err := agmem(t, dir, tc.env, "", tc.args...)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Errorf("%s: %v, want exit 1", tc.name, err)
			continue
		}
		stderr := strings.TrimSpace(err.Error()[strings.Index(err.Error(), "agmem: "):])
		got := strings.Split(stderr, "\n")
		if len(got) != 2 || !strings.Contains(got[0], tc.line) || !strings.HasPrefix(got[1], "agmem: hint: ") || !strings.Contains(got[1], tc.hint) {
			t.Errorf("%s: stderr\n%s\nwant one line saying %q and a hint saying %q", tc.name, stderr, tc.line, tc.hint)
		}
		if now := git(t, dir, "rev-parse", "HEAD"); now != head {
			t.Errorf("%s: HEAD moved", tc.name)
		}
	}
	git(t, dir, "remote", "set-url", "origin", srv.URL()+"/memory.git")
	if out := mustAgmemEnv(t, dir, creds, "push"); !strings.HasPrefix(out, "pushed main") {
		t.Errorf("push once the remote answers: %q", out)
	}

	// A first pull brings every agent's history and is not held to [sync] timeout (a
	// year's took over a minute); a later one is.
	fresh := filepath.Join(root, "b")
	mustAgmem(t, root, "", "init", fresh)
	git(t, fresh, "remote", "add", "origin", srv.URL()+"/memory.git")
	hurried := append([]string{"AGMEM_SYNC_TIMEOUT=1ns"}, creds...)
	if out := mustAgmemEnv(t, fresh, hurried, "pull"); !strings.Contains(out, "agents/") {
		t.Errorf("first pull, [sync] timeout 1ns: %q", out)
	}
	_, err := agmem(t, fresh, hurried, "", "pull")
	if err == nil || !strings.Contains(err.Error(), "no answer within 1ns ([sync] timeout)") {
		t.Errorf("second pull, [sync] timeout 1ns: %v", err)
	}

	// So is a first push of a branch, which sends its whole history: a remote that takes
	// 1.5 s to answer a push gets it past a bound of 1 s, the first time only.
	srv.slowPush = 1500 * time.Millisecond
	defer func() { srv.slowPush = 0 }()
	mustAgmem(t, fresh, observations(3, 1, "b"), "record", "--jsonl")
	mustAgmem(t, fresh, "", "flush")
	slow := append([]string{"AGMEM_SYNC_TIMEOUT=1s"}, creds...)
	if out := mustAgmemEnv(t, fresh, slow, "push"); !strings.HasPrefix(out, "pushed main") {
		t.Errorf("first push, [sync] timeout 1s, a remote answering in 1.5 s: %q", out)
	}
	mustAgmem(t, fresh, observations(3, 2, "c"), "record", "--jsonl")
	mustAgmem(t, fresh, "", "flush")
	if _, err := agmem(t, fresh, slow, "", "push"); err == nil || !strings.Contains(err.Error(), "no answer within 1s ([sync] timeout)") {
		t.Errorf("second push, [sync] timeout 1s, a remote answering in 1.5 s: %v", err)
	}
}

// closedAddr is a localhost address where nothing listens.
func closedAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func mustAgmemEnv(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	out, err := agmem(t, dir, env, "", args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// testDaemonPushes: the daemon pushes after each flush; while the remote is gone it
// logs, backs off and tries again, and local work goes on; once the remote is back,
// what was committed meanwhile reaches it.
func testDaemonPushes(t *testing.T) {
	root := t.TempDir()
	remote := bareRemote(t, root, "memory.git")
	dir := filepath.Join(root, "a")
	mustAgmem(t, root, "", "init", dir)
	git(t, dir, "remote", "add", "origin", remote)
	startDaemon(t, dir, nil, "--max-pending", "1", "--push", "origin")
	headOnRemote := func() bool {
		// In this order: a batch committed, then a head at or after it, then the remote
		// at that head. Read the other way, the head of before the first flush, already
		// pushed at start, passed with the batch committed just after it.
		if batches(t, dir) == 0 {
			return false
		}
		head := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
		_, branches := onRemote(t, remote)
		return slices.Contains(slices.Collect(maps.Values(branches)), head)
	}
	ids := lines(mustAgmem(t, dir, observations(3, 1, "a"), "record", "--jsonl"))
	waitFor(t, "the daemon to flush and push", headOnRemote)

	if err := os.Rename(remote, remote+".away"); err != nil {
		t.Fatal(err)
	}
	ids = append(ids, lines(mustAgmem(t, dir, observations(2, 1, "b"), "record", "--jsonl"))...)
	waitFor(t, "a push that fails", func() bool {
		var st struct {
			LastPush *struct{ Error string } `json:"last_push"`
		}
		json.Unmarshal([]byte(mustAgmem(t, dir, "", "daemon", "status", "--json")), &st)
		return st.LastPush != nil && strings.Contains(st.LastPush.Error, "repository not found")
	})
	ids = append(ids, lines(mustAgmem(t, dir, observations(2, 1, "c"), "record", "--jsonl"))...)
	waitFor(t, "local flushes to go on", func() bool { return batches(t, dir) == 3 })

	if err := os.Rename(remote+".away", remote); err != nil {
		t.Fatal(err)
	}
	// The next flush pushes at once, whatever the backoff had still to wait.
	ids = append(ids, lines(mustAgmem(t, dir, observations(1, 1, "d"), "record", "--jsonl"))...)
	waitFor(t, "the push after the remote came back", headOnRemote)
	mustAgmem(t, dir, "", "daemon", "stop")
	checkExactlyOnce(t, dir, ids)
	if log, _ := os.ReadFile(filepath.Join(dir, ".agmem", "daemon.log")); !bytes.Contains(log, []byte("push failed")) {
		t.Errorf("the daemon's log does not say the push failed:\n%s", log)
	}
}

// testBigSession: a session whose record is larger than 10 MiB is committed in parts,
// none larger, and read back whole from a clone; a flush killed after moving the branch
// is finished, exactly once, by the next.
func testBigSession(t *testing.T) {
	dir := t.TempDir()
	mustAgmem(t, dir, "", "init", ".")
	var in strings.Builder
	for i := range 12 {
		fmt.Fprintf(&in, `{"tool_name":"Read","arguments":{"path":"big-%d"},"result":"%s","session_id":"big"}`+"\n",
			i, strings.Repeat(string(rune('a'+i)), 1_000_000))
	}
	ids := lines(mustAgmem(t, dir, in.String(), "record", "--jsonl"))
	if _, err := agmem(t, dir, []string{"AGMEM_FAILPOINT=flush-after-ref"}, "", "flush"); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("the flush was not killed: %v", err)
	}
	mustAgmem(t, dir, "", "flush")
	checkExactlyOnce(t, dir, ids)

	var parts []string
	for _, line := range strings.Split(strings.TrimSpace(git(t, dir, "ls-tree", "-r", "-l", "HEAD")), "\n") {
		f := strings.Fields(line)
		var size int
		fmt.Sscan(f[3], &size)
		if size > 10<<20 {
			t.Errorf("%s is %d bytes, over 10 MiB", f[4], size)
		}
		if strings.HasPrefix(f[4], render.CurrentLayout.SessionDir("big")+"/") {
			parts = append(parts, f[4])
		}
	}
	if len(parts) != 2 {
		t.Errorf("the session record is in %v, want two parts", parts)
	}
	want := mustAgmem(t, dir, "", "replay", "--json", "--session", "big")
	clone := filepath.Join(t.TempDir(), "clone")
	git(t, dir, "clone", "-q", dir, clone)
	mustAgmem(t, clone, "", "init", ".")
	if got := mustAgmem(t, clone, "", "replay", "--json", "--session", "big"); got != want {
		t.Errorf("a clone replays %d bytes of the session, the journal %d", len(got), len(want))
	}
}
