package transport

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
	dir := t.TempDir()
	local, remote := filepath.Join(dir, "local"), filepath.Join(dir, "remote.git")
	gitCmd(t, dir, "init", "-q", "-b", "main", local)
	gitCmd(t, dir, "init", "-q", "--bare", remote)
	gitCmd(t, local, "remote", "add", "origin", remote)
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
	dir := t.TempDir()
	local, remote := filepath.Join(dir, "local"), filepath.Join(dir, "remote.git")
	gitCmd(t, dir, "init", "-q", "-b", "main", local)
	gitCmd(t, dir, "init", "-q", "--bare", remote)
	gitCmd(t, local, "remote", "add", "origin", remote)
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
			RefSpecs: []string{"refs/heads/main:refs/heads/agents/x"}, Whole: func() { told++ }, WholePack: git.WriteWholePack})
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
