package vcs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// lsFiles is `git ls-files -s`: path → "mode hash stage" for each index entry; an
// entry listed twice fails the test.
func lsFiles(t *testing.T, dir string, paths ...string) map[string]string {
	t.Helper()
	out := runGit(t, dir, append([]string{"-c", "core.quotePath=false", "ls-files", "-s", "--"}, paths...)...)
	got := map[string]string{}
	for _, l := range nonEmptyLines(out) {
		info, path, _ := strings.Cut(l, "\t")
		if prev, dup := got[path]; dup {
			t.Errorf("git ls-files -s lists %s twice: %q and %q", path, prev, info)
		}
		got[path] = info
	}
	return got
}

// assertIndexHolds checks that each file is in the index once, at stage 0, with the
// blob HEAD has for it.
func assertIndexHolds(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	index := lsFiles(t, dir)
	for _, p := range sortedKeys(files) {
		want := fmt.Sprintf("100644 %s 0", strings.TrimSpace(runGit(t, dir, "rev-parse", "HEAD:"+p)))
		if index[p] != want {
			t.Errorf("git ls-files -s %s = %q, want %q", p, index[p], want)
		}
	}
}

func assertClean(t *testing.T, dir string) {
	t.Helper()
	if got := runGit(t, dir, "status", "--porcelain", "--untracked-files=all"); got != "" {
		t.Errorf("git status --porcelain:\n%s", got)
	}
	if got := runGit(t, dir, "diff", "--cached", "--name-status"); got != "" {
		t.Errorf("git diff --cached:\n%s", got)
	}
	if got := runGit(t, dir, "diff", "--name-status"); got != "" {
		t.Errorf("git diff:\n%s", got)
	}
}

func TestMaterializeMakesTheWorktreeClean(t *testing.T) {
	r, dir := newRepo(t)
	first := map[string]string{"README.md": "hello\n", "current/semantic/a.md": "a\n"}
	d1, _ := commitFiles(t, r, first, "one\n")
	if err := r.Materialize(d1.Changes()); err != nil {
		t.Fatal(err)
	}
	assertClean(t, dir)
	assertIndexHolds(t, dir, first)

	second := map[string]string{
		"current/semantic/b.md":              "b\n",
		"current/episodic/2026-11-30/x.md":   "x\n",
		"current/episodic/2026-11-30/x-y.md": "xy\n",
		"current/episodic/2026-11-30.md":     "beside the dir\n",
		"sessions/s/b.jsonl":                 "{}\n",
		"README.md":                          "hello again\n",
	}
	d2, _ := commitFiles(t, r, second, "two\n")
	all := merged(first, second)
	for i := 0; i < 2; i++ { // the same changes twice: it converges
		if err := r.Materialize(d2.Changes()); err != nil {
			t.Fatalf("Materialize #%d: %v", i+1, err)
		}
		assertClean(t, dir)
		assertIndexHolds(t, dir, all)
		if n := len(lsFiles(t, dir)); n != len(all) {
			t.Errorf("Materialize #%d: the index has %d entries, want %d", i+1, n, len(all))
		}
	}
	for p, data := range all {
		if got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p))); err != nil || string(got) != data {
			t.Errorf("worktree %s = %q, %v; want %q", p, got, err, data)
		}
	}
	assertFsck(t, dir)
}

// What a flush does after a crash: the files of a commit, read back from git.
func TestMaterializeAddedFiles(t *testing.T) {
	r, dir := newRepo(t)
	d1, _ := commitFiles(t, r, map[string]string{"a": "a"}, "one\n")
	if err := r.Materialize(d1.Changes()); err != nil {
		t.Fatal(err)
	}
	_, h := commitFiles(t, r, map[string]string{"a": "a2", "x/y/z": "z", "x/w": "w"}, "two\n")
	changes, err := r.AddedFiles(h)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Materialize(changes); err != nil {
		t.Fatal(err)
	}
	assertClean(t, dir)
	assertIndexHolds(t, dir, map[string]string{"a": "", "x/y/z": "", "x/w": ""})
}

func TestMaterializeKeepsWhatAPersonStaged(t *testing.T) {
	r, dir := newRepo(t)
	d1, _ := commitFiles(t, r, map[string]string{"README": "r\n", "notes/old.md": "old\n"}, "one\n")
	if err := r.Materialize(d1.Changes()); err != nil {
		t.Fatal(err)
	}
	writeWorktree(t, dir, map[string]string{"notes/new.md": "staged\n", "README": "r changed\n", "wip.txt": "not added\n"})
	runGit(t, dir, "add", "notes/new.md", "README")
	staged := lsFiles(t, dir, "notes/new.md", "README")

	d2, _ := commitFiles(t, r, map[string]string{"mem/a.md": "a\n", "mem/b.md": "b\n"}, "two\n")
	if err := r.Materialize(d2.Changes()); err != nil {
		t.Fatal(err)
	}

	if got := nonEmptyLines(runGit(t, dir, "diff", "--cached", "--name-status")); !equalStrings(got, []string{"M\tREADME", "A\tnotes/new.md"}) {
		t.Errorf("git diff --cached --name-status = %q; the person's staged changes are lost", got)
	}
	if got := nonEmptyLines(runGit(t, dir, "status", "--porcelain")); !equalStrings(got, []string{"M  README", "A  notes/new.md", "?? wip.txt"}) {
		t.Errorf("git status --porcelain = %q", got)
	}
	if got := lsFiles(t, dir, "notes/new.md", "README"); got["notes/new.md"] != staged["notes/new.md"] || got["README"] != staged["README"] {
		t.Errorf("the staged entries changed: %q, was %q", got, staged)
	}
	assertIndexHolds(t, dir, map[string]string{"mem/a.md": "", "mem/b.md": "", "notes/old.md": ""})
	// The person's commit then holds both their change and agmem's files.
	runGit(t, dir, "commit", "-q", "-m", "person")
	assertTree(t, dir, "HEAD", map[string]string{
		"README": "r changed\n", "notes/old.md": "old\n", "notes/new.md": "staged\n", "mem/a.md": "a\n", "mem/b.md": "b\n",
	})
	assertFsck(t, dir)
}

// Regression: a .gitignore tracked before agmem replaced it was left in the index
// twice, once with the old blob.
func TestMaterializeReplacesATrackedGitignoreOnce(t *testing.T) {
	dir := t.TempDir()
	runGit(t, dir, "init", "-q", "-b", "main")
	writeWorktree(t, dir, map[string]string{".gitignore": "*.log\n", "a": "a\n", "z/.gitignore": "x\n"})
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "person")

	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := commitFiles(t, r, map[string]string{".gitignore": "*.log\n.agmem/\n"}, "agmem: keep .agmem/ out of git\n")
	if err := r.Materialize(d.Changes()); err != nil {
		t.Fatal(err)
	}
	if got := lsFiles(t, dir, ".gitignore"); len(got) != 1 {
		t.Errorf("git ls-files -s .gitignore = %q, want one entry", got)
	}
	assertIndexHolds(t, dir, map[string]string{".gitignore": "", "a": "", "z/.gitignore": ""})
	if n := len(lsFiles(t, dir)); n != 3 {
		t.Errorf("the index has %d entries, want 3", n)
	}
	assertClean(t, dir)

	// Again, on top: still once.
	d, _ = commitFiles(t, r, map[string]string{".gitignore": "*.log\n.agmem/\n*.tmp\n"}, "again\n")
	if err := r.Materialize(d.Changes()); err != nil {
		t.Fatal(err)
	}
	assertIndexHolds(t, dir, map[string]string{".gitignore": ""})
	if n := len(lsFiles(t, dir)); n != 3 {
		t.Errorf("the index has %d entries, want 3", n)
	}
	assertClean(t, dir)
}

// Index features git uses that go-git reads: version 4, intent-to-add entries,
// the untracked cache and the cache tree.
func TestMaterializeKeepsAnIndexGitWrote(t *testing.T) {
	dir := t.TempDir()
	runGit(t, dir, "init", "-q", "-b", "main")
	files := map[string]string{}
	for i := 0; i < 100; i++ {
		files[fmt.Sprintf("d%d/f%03d", i%7, i)] = fmt.Sprint(i)
	}
	writeWorktree(t, dir, files)
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "person")
	runGit(t, dir, "update-index", "--index-version", "4")
	runGit(t, dir, "update-index", "--untracked-cache")
	writeWorktree(t, dir, map[string]string{"later.txt": "later\n"})
	runGit(t, dir, "add", "-N", "later.txt")
	runGit(t, dir, "status", "--porcelain") // fills the untracked cache

	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := commitFiles(t, r, map[string]string{"mem/x.md": "x\n", "d3/f003": "changed"}, "agmem\n")
	if err := r.Materialize(d.Changes()); err != nil {
		t.Fatal(err)
	}
	if got := nonEmptyLines(runGit(t, dir, "status", "--porcelain")); !equalStrings(got, []string{" A later.txt"}) {
		t.Errorf("git status --porcelain = %q, want the intent-to-add entry only", got)
	}
	assertIndexHolds(t, dir, merged(files, map[string]string{"mem/x.md": ""}))
	if n := len(lsFiles(t, dir)); n != len(files)+2 {
		t.Errorf("the index has %d entries, want %d", n, len(files)+2)
	}
	assertFsck(t, dir)
}

// A merge with conflicts in progress: the conflict stages of the person's paths are
// kept, in the order git requires, so the person can still resolve and commit.
func TestMaterializeKeepsAConflictedMerge(t *testing.T) {
	dir := t.TempDir()
	runGit(t, dir, "init", "-q", "-b", "main")
	base := map[string]string{}
	for i := 0; i < 60; i++ {
		base[fmt.Sprintf("f%02d", i)] = "base\n"
	}
	writeWorktree(t, dir, base)
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "base")
	runGit(t, dir, "checkout", "-q", "-b", "other")
	conflicted := map[string]string{}
	for i := 0; i < 60; i += 3 {
		conflicted[fmt.Sprintf("f%02d", i)] = "other\n"
	}
	writeWorktree(t, dir, conflicted)
	runGit(t, dir, "commit", "-q", "-am", "other")
	runGit(t, dir, "checkout", "-q", "main")
	for p := range conflicted {
		conflicted[p] = "main\n"
	}
	writeWorktree(t, dir, conflicted)
	runGit(t, dir, "commit", "-q", "-am", "main")
	if _, _, err := execGit(dir, "", "merge", "-q", "other"); err == nil {
		t.Fatal("the merge did not conflict")
	}
	before := runGit(t, dir, "ls-files", "-s")

	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := commitFiles(t, r, map[string]string{"mem/x.md": "x\n"}, "agmem\n")
	if err := r.Materialize(d.Changes()); err != nil {
		t.Fatal(err)
	}
	after, errOut, err := execGit(dir, "", "ls-files", "-s")
	if err != nil {
		t.Fatalf("git ls-files after Materialize: %v\n%s", err, errOut)
	}
	var kept []string
	for _, l := range nonEmptyLines(after) {
		if !strings.HasSuffix(l, "\tmem/x.md") {
			kept = append(kept, l)
		}
	}
	if !equalStrings(kept, nonEmptyLines(before)) {
		t.Errorf("the person's index changed:\nbefore\n%s\nafter\n%s", before, after)
	}
	if _, errOut, err := execGit(dir, "", "status", "--porcelain"); err != nil {
		t.Errorf("git status after Materialize: %v\n%s", err, errOut)
	}
}

// An index.lock an agmem process left when it was killed is taken over; one that a git
// command holds, however old (git commit holds it while its editor is open), is not.
func TestMaterializeTakesOverOnlyAgmemsOwnIndexLock(t *testing.T) {
	r, dir := newRepo(t)
	d, _ := commitFiles(t, r, map[string]string{"a": "a"}, "one\n")
	lock := filepath.Join(dir, ".git", "index.lock")

	if _, err := r.LockIndex(); err != nil { // never released: the process "died"
		t.Fatal(err)
	}
	if err := r.Materialize(d.Changes()); err != nil {
		t.Fatalf("Materialize after a killed agmem left its lock: %v", err)
	}
	if _, err := os.Stat(lock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("index.lock is still there: %v", err)
	}
	assertClean(t, dir)

	if testing.Short() {
		return
	}
	if err := os.WriteFile(lock, []byte("git's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	if err := r.Materialize(d.Changes()); err == nil || !strings.Contains(err.Error(), "remove it") {
		t.Fatalf("Materialize under git's lock = %v, want a refusal with a hint", err)
	}
	if data, err := os.ReadFile(lock); err != nil || string(data) != "git's\n" {
		t.Errorf("git's lock was touched: %q, %v", data, err)
	}
}

// A symbolic link in the worktree on the way to a file would have Materialize write
// outside the worktree.
func TestMaterializeDoesNotFollowSymlinks(t *testing.T) {
	r, dir := newRepo(t)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "mem")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "target"), filepath.Join(dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"mem/x.md", "link.md"} {
		d, err := r.NewDraft(plumbing.ZeroHash)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Put(p, []byte("x\n")); err != nil {
			t.Fatal(err)
		}
		if err := r.Materialize(d.Changes()); err == nil {
			t.Errorf("Materialize(%s) through a symbolic link succeeded", p)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("Materialize wrote outside the worktree: %v", entries)
	}
}
