package transport

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agmem/agmem/vcs"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/cache"
	gittransport "github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	"github.com/go-git/go-git/v5/plumbing/transport/file"
	"github.com/go-git/go-git/v5/plumbing/transport/server"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// TestPushFastForward pushes new commits onto a branch the remote has, sending only
// what they brought, and leaves what it cannot do as a fast-forward to go-git's push.
func TestPushFastForward(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("this test makes and checks repositories with the git CLI: install git")
	}
	_, local, remote := localAndRemote(t)
	write(t, local, "current/a/2026-01-01/one.md", "one")
	write(t, local, "current/a/2026-01-01/two.md", "two")
	write(t, local, "sessions/0f/s1/b1.jsonl", "{}")
	commitAll(t, local, "first")
	gitCmd(t, local, "push", "-q", "origin", "main:refs/heads/agents/x")

	// Files added beside others, in new directories, changed and removed.
	write(t, local, "current/a/2026-01-01/three.md", "three")
	write(t, local, "current/b/2026-01-02/four.md", "four")
	commitAll(t, local, "second")
	write(t, local, "current/a/2026-01-01/one.md", "one, changed")
	os.Remove(filepath.Join(local, "current/a/2026-01-01/two.md"))
	write(t, local, "sessions/0f/s1/b2.jsonl", "{}")
	commitAll(t, local, "third")

	push := func() error {
		st := filesystem.NewStorage(osfs.New(filepath.Join(local, ".git")), cache.NewObjectLRUDefault())
		cfg, err := st.Config()
		if err != nil {
			t.Fatal(err)
		}
		rc := cfg.Remotes["origin"]
		ep, err := gittransport.NewEndpoint(rc.URLs[0])
		if err != nil {
			t.Fatal(err)
		}
		return pushFastForward(context.Background(), st, rc, ep, nil, config.RefSpec("refs/heads/main:refs/heads/agents/x"), Request{})
	}
	if err := push(); err != nil {
		t.Fatalf("a fast-forward: %v", err)
	}
	gitCmd(t, remote, "fsck", "--strict", "--no-progress")
	tip := gitCmd(t, local, "rev-parse", "main")
	if got := gitCmd(t, remote, "rev-parse", "agents/x"); got != tip {
		t.Fatalf("the remote's agents/x is %s, not %s", got, tip)
	}
	if got := gitCmd(t, local, "rev-parse", "refs/remotes/origin/agents/x"); got != tip {
		t.Fatalf("the remote-tracking ref is %s, not %s", got, tip)
	}
	if want, got := gitCmd(t, local, "rev-list", "--objects", "main"), gitCmd(t, remote, "rev-list", "--objects", "agents/x"); got != want {
		t.Fatalf("the remote reaches\n%s\nnot\n%s", got, want)
	}
	if err := push(); !errors.Is(err, git.NoErrAlreadyUpToDate) {
		t.Fatalf("a push of nothing new: %v", err)
	}

	// A merge on the way: go-git's push does it.
	gitCmd(t, local, "checkout", "-q", "-b", "side", "HEAD~1")
	write(t, local, "current/c/2026-01-03/five.md", "five")
	commitAll(t, local, "side")
	gitCmd(t, local, "checkout", "-q", "main")
	gitCmd(t, local, "merge", "-q", "--no-edit", "side")
	if err := push(); !errors.Is(err, errNotFastForward) {
		t.Fatalf("a push with a merge: %v, not errNotFastForward", err)
	}
	// A remote branch this history does not hold: go-git's push says it diverged.
	gitCmd(t, local, "checkout", "-q", "--orphan", "other")
	commitAll(t, local, "unrelated")
	gitCmd(t, local, "push", "-q", "-f", "origin", "other:refs/heads/agents/x")
	gitCmd(t, local, "checkout", "-q", "main")
	if err := push(); !errors.Is(err, errNotFastForward) {
		t.Fatalf("a push onto a branch not in the history: %v, not errNotFastForward", err)
	}
	_, err := Run(context.Background(), Request{Op: OpPush, GitDir: filepath.Join(local, ".git"), Dir: local, Remote: "origin",
		RefSpecs: []string{"refs/heads/main:refs/heads/agents/x"}})
	var f *Failure
	if !errors.As(err, &f) || f.Kind != KindDiverged {
		t.Fatalf("Run of that push: %v, not a failure of kind %s", err, KindDiverged)
	}
}

// TestPushOfABranchTheRemoteLacks sends the whole history as the request's WholePack
// writes it, after telling Whole; the remote holds every object the branch reaches.
func TestPushOfABranchTheRemoteLacks(t *testing.T) {
	dir, local, remote := localAndRemote(t)
	for i := range 3 {
		write(t, local, fmt.Sprintf("current/a/2026-01-0%d/one.md", i+1), strings.Repeat(fmt.Sprintf("line %d\n", i), 100))
		commitAll(t, local, fmt.Sprint("commit ", i))
		if i == 1 {
			gitCmd(t, local, "repack", "-a", "-d", "-q")
		}
	}
	git, err := vcs.Open(local)
	if err != nil {
		t.Fatal(err)
	}
	push := func(remoteName string) {
		t.Helper()
		told := 0
		upToDate, err := Run(context.Background(), Request{Op: OpPush, GitDir: filepath.Join(local, ".git"), Dir: local, Remote: remoteName,
			RefSpecs: []string{"refs/heads/main:refs/heads/agents/x"}, Whole: func() { told++ }, WholePack: git.PlanWholePack})
		if err != nil || upToDate || told != 1 {
			t.Fatalf("a push of a branch the remote lacks: up to date %v, told %d times, %v", upToDate, told, err)
		}
	}
	check := func(remoteName, remote string) {
		t.Helper()
		gitCmd(t, remote, "fsck", "--strict", "--no-progress")
		if want, got := gitCmd(t, local, "rev-list", "--objects", "main"), gitCmd(t, remote, "rev-list", "--objects", "agents/x"); got != want {
			t.Fatalf("the remote reaches\n%s\nnot\n%s", got, want)
		}
		if got, want := gitCmd(t, local, "rev-parse", "refs/remotes/"+remoteName+"/agents/x"), gitCmd(t, local, "rev-parse", "main"); got != want {
			t.Fatalf("the remote-tracking ref is %s, not %s", got, want)
		}
	}
	push("origin") // git-receive-pack takes it
	check("origin", remote)

	// go-git's own receive-pack, which agmem runs where git is not installed.
	own := filepath.Join(dir, "own.git")
	gitCmd(t, dir, "init", "-q", "--bare", own)
	gitCmd(t, local, "remote", "add", "own", own)
	client.InstallProtocol("file", server.NewClient(server.DefaultLoader))
	defer client.InstallProtocol("file", file.DefaultClient)
	push("own")
	check("own", own)
}

// A branch the remote lacks, beside one of the remote's that its history holds (a copy
// of a memory repo pushed under a new id), and refs of a blob and a tree it holds too:
// only what those do not reach is sent.
func TestPushOfABranchSendsWhatTheRemoteLacks(t *testing.T) {
	_, local, remote := localAndRemote(t)
	for i := range 4 {
		write(t, local, fmt.Sprintf("current/a/%d.md", i), strings.Repeat(fmt.Sprintf("line %d\n", i), 50))
		commitAll(t, local, fmt.Sprint("commit ", i))
	}
	gitCmd(t, remote, "config", "receive.unpackLimit", "1") // each push's pack kept as it came
	gitCmd(t, local, "push", "-q", "origin", "main~1:refs/heads/agents/a")
	// Refs of a blob and a tree, as a remote may hold (git's own tags one blob).
	gitCmd(t, remote, "update-ref", "refs/tags/blob", gitCmd(t, local, "rev-parse", "main~1:current/a/0.md"))
	gitCmd(t, remote, "update-ref", "refs/tags/tree", gitCmd(t, local, "rev-parse", "main~1:current"))
	git, err := vcs.Open(local)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), Request{Op: OpPush, GitDir: filepath.Join(local, ".git"), Dir: local, Remote: "origin",
		RefSpecs: []string{"refs/heads/main:refs/heads/agents/b"}, WholePack: git.PlanWholePack}); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, remote, "fsck", "--strict", "--no-progress")
	reached := len(strings.Fields(gitCmd(t, local, "rev-list", "--objects", "--no-object-names", "main")))
	if got := gitCmd(t, remote, "count-objects", "-v"); !strings.Contains(got, fmt.Sprintf("in-pack: %d\n", reached)) {
		t.Errorf("the remote holds, for %d objects reached:\n%s", reached, got)
	}
}

// A push whose pack cannot be made fails, and says why, and never waits on the remote:
// a shallow clone's history, which the pack would need whole, and a blob damaged in its
// pack, found only while the pack is being sent.
func TestPushThatCannotBeSentEnds(t *testing.T) {
	dir := t.TempDir()
	up := filepath.Join(dir, "up")
	gitCmd(t, dir, "init", "-q", "-b", "main", up)
	for i := range 3 {
		write(t, up, fmt.Sprintf("n%d.md", i), strings.Repeat(fmt.Sprintf("note %d\n", i), 40))
		commitAll(t, up, fmt.Sprint("note ", i))
	}
	shallow, damaged := filepath.Join(dir, "shallow"), filepath.Join(dir, "damaged")
	gitCmd(t, dir, "clone", "-q", "--depth", "1", "file://"+up, shallow)
	gitCmd(t, dir, "clone", "-q", "--no-local", up, damaged)
	gitCmd(t, damaged, "repack", "-a", "-d", "-q")
	// A byte in the middle of the biggest blob's entry.
	var at, size int
	for _, line := range strings.Split(gitCmd(t, damaged, "verify-pack", "-v", onePackIndex(t, damaged)), "\n") {
		f := strings.Fields(line)
		if len(f) >= 5 && f[1] == "blob" {
			n, _ := strconv.Atoi(f[3])
			if n > size {
				size, _ = n, 0
				at, _ = strconv.Atoi(f[4])
			}
		}
	}
	packPath := strings.TrimSuffix(onePackIndex(t, damaged), ".idx") + ".pack"
	os.Chmod(packPath, 0o644)
	data, err := os.ReadFile(packPath)
	if err != nil || size < 8 {
		t.Fatalf("no blob to damage (%d bytes): %v", size, err)
	}
	data[at+size/2] ^= 0xff
	os.WriteFile(packPath, data, 0o444)

	for name, local := range map[string]string{"shallow": shallow, "damaged": damaged} {
		remote := filepath.Join(dir, name+".git")
		gitCmd(t, dir, "init", "-q", "--bare", remote)
		gitCmd(t, local, "remote", "add", "hub", remote)
		git, err := vcs.Open(local)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := Run(context.Background(), Request{Op: OpPush, GitDir: filepath.Join(local, ".git"), Dir: local, Remote: "hub",
				RefSpecs: []string{"refs/heads/main:refs/heads/agents/x"}, WholePack: git.PlanWholePack})
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("%s: the push succeeded", name)
			} else if name == "damaged" && !strings.Contains(err.Error(), "damaged") {
				t.Errorf("%s: %v, not what is damaged", name, err)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("%s: the push still waits after a minute", name)
		}
		if out := gitCmd(t, remote, "for-each-ref"); out != "" {
			t.Errorf("%s: the remote took a ref: %s", name, out)
		}
	}
}

// onePackIndex is the index of the one pack of the repo at dir.
func onePackIndex(t *testing.T, dir string) string {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*.idx"))
	if len(names) != 1 {
		t.Fatalf("%d packs in %s, want 1", len(names), dir)
	}
	return names[0]
}

// localAndRemote makes, in a directory of its own, a repository "local" on main and a
// bare one, its remote origin.
func localAndRemote(t *testing.T) (dir, local, remote string) {
	t.Helper()
	dir = t.TempDir()
	local, remote = filepath.Join(dir, "local"), filepath.Join(dir, "remote.git")
	gitCmd(t, dir, "init", "-q", "-b", "main", local)
	gitCmd(t, dir, "init", "-q", "--bare", remote)
	gitCmd(t, local, "remote", "add", "origin", remote)
	return dir, local, remote
}

func gitCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t",
		"GIT_AUTHOR_EMAIL=t@localhost", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@localhost")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, dir, path, content string) {
	t.Helper()
	p := filepath.Join(dir, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func commitAll(t *testing.T, dir, message string) {
	t.Helper()
	gitCmd(t, dir, "add", "-A")
	gitCmd(t, dir, "commit", "-q", "--allow-empty", "-m", message)
}
