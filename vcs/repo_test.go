package vcs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

func TestInitEmptyDirMakesUnbornMain(t *testing.T) {
	r, dir := newRepo(t)

	if got := strings.TrimSpace(runGit(t, dir, "symbolic-ref", "HEAD")); got != "refs/heads/main" {
		t.Errorf("git symbolic-ref HEAD = %q, want refs/heads/main", got)
	}
	if _, _, err := execGit(dir, "", "rev-parse", "--verify", "-q", "HEAD"); err == nil {
		t.Errorf("git rev-parse HEAD succeeded on a new repo: the branch should be unborn")
	}
	if got := strings.TrimSpace(runGit(t, dir, "rev-parse", "--show-toplevel")); got != resolved(t, dir) {
		t.Errorf("git sees the worktree at %q, want %q", got, dir)
	}
	if got := branchOf(t, r); got != "refs/heads/main" {
		t.Errorf("Branch = %q, want refs/heads/main", got)
	}
	tip, err := r.Tip(branchOf(t, r))
	if err != nil || !tip.IsZero() {
		t.Errorf("Tip of an unborn branch = %s, %v; want the zero hash", tip, err)
	}

	// A second Init finds the repo and keeps it.
	if _, created, err := Init(dir); err != nil || created {
		t.Errorf("Init again = created %v, %v; want false, nil", created, err)
	}
}

func TestInitKeepsAnExistingRepoAndItsBranch(t *testing.T) {
	dir := t.TempDir()
	runGit(t, dir, "init", "-q", "-b", "trunk")
	runGit(t, dir, "commit", "-q", "--allow-empty", "-m", "human start")
	human := revParse(t, dir, "HEAD")

	r, created, err := Init(dir)
	if err != nil || created {
		t.Fatalf("Init on a git repo = created %v, %v; want false, nil", created, err)
	}
	if got := branchOf(t, r); got != "refs/heads/trunk" {
		t.Errorf("Branch = %q, want refs/heads/trunk", got)
	}
	if tip, err := r.Tip("refs/heads/trunk"); err != nil || tip != human {
		t.Errorf("Tip = %s, %v; want %s", tip, err, human)
	}
	if got := strings.TrimSpace(runGit(t, dir, "symbolic-ref", "HEAD")); got != "refs/heads/trunk" {
		t.Errorf("after Init, HEAD is %q, want refs/heads/trunk", got)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "refs", "heads", "main")); err == nil {
		t.Errorf("Init made a main branch in a repo on trunk")
	}
}

func TestOpenRefusesADirWithoutGit(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(dir); err == nil {
		t.Errorf("Open(a dir without .git) succeeded")
	}
	if _, err := Open(filepath.Join(dir, "missing")); err == nil {
		t.Errorf("Open(a missing dir) succeeded")
	}
	// A subdirectory of a worktree is not the worktree.
	_, root := newRepo(t)
	sub := filepath.Join(root, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(sub); err == nil {
		t.Errorf("Open(a subdirectory of a worktree) succeeded")
	}
}

func TestBranchOnDetachedHead(t *testing.T) {
	dir := t.TempDir()
	runGit(t, dir, "init", "-q", "-b", "main")
	runGit(t, dir, "commit", "-q", "--allow-empty", "-m", "one")
	runGit(t, dir, "checkout", "-q", "--detach")

	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Branch(); !errors.Is(err, ErrDetached) {
		t.Errorf("Branch on a detached HEAD = %v, want ErrDetached", err)
	}
}

func TestSignatureDefaultsToAgmem(t *testing.T) {
	t.Setenv("HOME", t.TempDir()) // no ~/.gitconfig
	t.Setenv("GIT_AUTHOR_NAME", "")
	t.Setenv("GIT_AUTHOR_EMAIL", "")
	r, dir := newRepo(t)
	commitFiles(t, r, map[string]string{"f": "x"}, "m\n")

	want := "agmem <agmem@localhost>|agmem <agmem@localhost>"
	if got := strings.TrimSpace(runGit(t, dir, "log", "-1", "--format=%an <%ae>|%cn <%ce>")); got != want {
		t.Errorf("commit by %q, want %q", got, want)
	}
	assertFsck(t, dir)
}

func TestSignatureFromConfig(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("GIT_AUTHOR_NAME", "")
	t.Setenv("GIT_AUTHOR_EMAIL", "")
	r, dir := newRepo(t)

	// The user's global identity...
	runGit(t, home, "config", "--global", "user.name", "Global Person")
	runGit(t, home, "config", "--global", "user.email", "global@example.com")
	commitFiles(t, r, map[string]string{"f1": "x"}, "m\n")
	if got := strings.TrimSpace(runGit(t, dir, "log", "-1", "--format=%an <%ae>")); got != "Global Person <global@example.com>" {
		t.Errorf("with a global identity, commit by %q", got)
	}

	// ...is overridden by the repo's, as git does...
	runGit(t, dir, "config", "user.name", "Repo Person")
	commitFiles(t, r, map[string]string{"f2": "x"}, "m\n")
	if got := strings.TrimSpace(runGit(t, dir, "log", "-1", "--format=%an <%ae>")); got != "Repo Person <global@example.com>" {
		t.Errorf("with a repo user.name, commit by %q", got)
	}

	// ...and both by the environment: GIT_AUTHOR_* names the author only, and
	// GIT_COMMITTER_* the committer, as in git.
	t.Setenv("GIT_AUTHOR_NAME", "Env Person")
	t.Setenv("GIT_AUTHOR_EMAIL", "env@example.com")
	t.Setenv("GIT_COMMITTER_NAME", "")
	t.Setenv("GIT_COMMITTER_EMAIL", "")
	commitFiles(t, r, map[string]string{"f3": "x"}, "m\n")
	if got := strings.TrimSpace(runGit(t, dir, "log", "-1", "--format=%an <%ae>|%cn <%ce>")); got != "Env Person <env@example.com>|Repo Person <global@example.com>" {
		t.Errorf("with GIT_AUTHOR_*, commit by %q", got)
	}
	t.Setenv("GIT_COMMITTER_NAME", "Env Committer")
	t.Setenv("GIT_COMMITTER_EMAIL", "committer@example.com")
	commitFiles(t, r, map[string]string{"f4": "x"}, "m\n")
	if got := strings.TrimSpace(runGit(t, dir, "log", "-1", "--format=%cn <%ce>")); got != "Env Committer <committer@example.com>" {
		t.Errorf("with GIT_COMMITTER_*, committed by %q", got)
	}
	assertFsck(t, dir)
}

func TestSignatureCleansWhatFsckRefuses(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for i, tc := range []struct{ name, email, want string }{
		{"Eve <eve@evil> x", "a@b", "Eve eve@evil x <a@b>"},
		{"Multi\nLine\r\nName", "multi@example.com", "MultiLineName <multi@example.com>"},
		{"<>", "<>", "agmem <agmem@localhost>"},
		{"  Spaced  ", " <spaced@example.com> ", "Spaced <spaced@example.com>"},
		{"Name>", "x>y@z\n", "Name <xy@z>"},
	} {
		t.Setenv("GIT_AUTHOR_NAME", tc.name)
		t.Setenv("GIT_AUTHOR_EMAIL", tc.email)
		r, dir := newRepo(t)
		commitFiles(t, r, map[string]string{"f": "x"}, "m\n")
		if got := strings.TrimSpace(runGit(t, dir, "log", "-1", "--format=%an <%ae>")); got != tc.want {
			t.Errorf("%d: name %q email %q: commit by %q, want %q", i, tc.name, tc.email, got, tc.want)
		}
		assertFsck(t, dir)
	}
}

func TestReadersAgreeWithGit(t *testing.T) {
	r, dir := newRepo(t)
	if data, err := r.FileAt(plumbing.ZeroHash, "x"); data != nil || err != nil {
		t.Errorf("FileAt(zero) = %q, %v; want nil, nil", data, err)
	}
	files := map[string]string{
		"sessions/s1/b1.jsonl": "one\n",
		"sessions/s1/b2.jsonl": "two\n",
		"sessions/s2/b3.jsonl": "three\n",
		"sessions/README":      "not a session\n",
		"top":                  "top\n",
	}
	_, h := commitFiles(t, r, files, "m\n")
	assertTree(t, dir, "HEAD", files)

	if data, err := r.FileAt(h, "sessions/s1/b2.jsonl"); err != nil || string(data) != "two\n" {
		t.Errorf("FileAt = %q, %v", data, err)
	}
	if data, err := r.FileAt(h, "sessions/nope"); data != nil || err != nil {
		t.Errorf("FileAt(missing) = %q, %v; want nil, nil", data, err)
	}
	dirs, err := r.ListDir(h, "sessions")
	sort.Strings(dirs)
	if err != nil || !equalStrings(dirs, []string{"s1", "s2"}) {
		t.Errorf("ListDir(sessions) = %q, %v", dirs, err)
	}
	if dirs, err := r.ListDir(h, "nope"); dirs != nil || err != nil {
		t.Errorf("ListDir(missing) = %q, %v", dirs, err)
	}
	got, err := r.ReadDir(h, "sessions/s1")
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(got, func(i, j int) bool { return got[i].Path < got[j].Path })
	if len(got) != 2 || got[0].Path != "sessions/s1/b1.jsonl" || string(got[0].Data) != "one\n" ||
		got[1].Path != "sessions/s1/b2.jsonl" || string(got[1].Data) != "two\n" {
		t.Errorf("ReadDir(sessions/s1) = %+v", got)
	}
	if got, err := r.ReadDir(h, "sessions"); err != nil || len(got) != 1 || got[0].Path != "sessions/README" {
		t.Errorf("ReadDir(sessions) = %+v, %v; want only the file sessions/README", got, err)
	}
}

// resolved is dir with its symbolic links resolved, as git prints it.
func resolved(t *testing.T, dir string) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestRefsReadWhileGitRewritesThem: git gc (agmem gc, the daemon's) packs the loose
// refs, and a ref file it is writing is empty for a moment, which go-git refuses: the
// branches are read again, not failed, once git is done.
func TestRefsReadWhileGitRewritesThem(t *testing.T) {
	r, dir := newRepo(t)
	commitFiles(t, r, map[string]string{"a.md": "a"}, "one")
	half := filepath.Join(dir, ".git", "refs", "heads", "being-written")
	if err := os.WriteFile(half, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(30 * time.Millisecond)
		os.Remove(half)
	}()
	branches, err := r.Branches()
	<-done
	if err != nil || len(branches) != 1 {
		t.Fatalf("branches while a ref is written: %v, %v", branches, err)
	}
	if _, err := r.FetchedAgents(""); err != nil {
		t.Fatal(err)
	}
}

// TestObjectsReadAfterPacksMerged: a reader that listed the packs before another
// process merged them (a flush's MergePacks, git gc) reads its objects where they are
// now, rather than failing with "packfile not found".
func TestObjectsReadAfterPacksMerged(t *testing.T) {
	r, dir := newRepo(t)
	var commits []plumbing.Hash
	for i := range 3 {
		_, c := commitFiles(t, r, map[string]string{fmt.Sprintf("f%d.md", i): strings.Repeat("x", 100+i)}, fmt.Sprint("commit ", i))
		commits = append(commits, c)
	}
	reader, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reader.Commit(commits[0]); err != nil { // the packs listed, agmem's
		t.Fatal(err)
	}
	if _, err := reader.goGitObject(plumbing.AnyObject, commits[0]); err != nil { // and go-git's
		t.Fatal(err)
	}
	runGit(t, dir, "repack", "-a", "-d", "-q")
	for _, c := range commits[1:] {
		if _, err := reader.Commit(c); err != nil {
			t.Fatalf("after the packs were merged: %v", err)
		}
	}
}
