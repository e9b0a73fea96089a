package vcs

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

func TestFirstCommitOnAnUnbornBranch(t *testing.T) {
	r, dir := newRepo(t)
	files := map[string]string{"README.md": "hello\n", "docs/a.md": "a\n"}
	_, h := commitFiles(t, r, files, "first\n\nbody\n")

	if got := revParse(t, dir, "HEAD"); got != h {
		t.Fatalf("HEAD = %s, Commit returned %s", got, h)
	}
	if got := revParse(t, dir, "refs/heads/main"); got != h {
		t.Errorf("refs/heads/main = %s, want %s", got, h)
	}
	if n := strings.TrimSpace(runGit(t, dir, "rev-list", "--count", "HEAD")); n != "1" {
		t.Errorf("git rev-list --count HEAD = %s, want 1", n)
	}
	if parents := strings.TrimSpace(runGit(t, dir, "log", "-1", "--format=%P")); parents != "" {
		t.Errorf("first commit has parents %q", parents)
	}
	if got := runGit(t, dir, "log", "-1", "--format=%B"); got != "first\n\nbody\n\n" {
		t.Errorf("message %q", got)
	}
	if got := strings.TrimSpace(runGit(t, dir, "log", "-1", "--format=%ad|%cd", "--date=iso-strict")); got != "2026-11-30T09:00:02+01:00|2026-11-30T09:00:02+01:00" {
		t.Errorf("author and committer dates %q", got)
	}
	assertTree(t, dir, "HEAD", files)
	assertFsck(t, dir)
}

// Names that sort differently when a directory is (wrongly) compared without its
// trailing slash: '-' (0x2d) and '.' (0x2e) sort before '/' (0x2f), '0' after it.
func TestCommitsWithTrickyNames(t *testing.T) {
	r, dir := newRepo(t)
	all := map[string]string{"README": "start\n"}
	_, prev := commitFiles(t, r, all, "start\n")
	assertTree(t, dir, "HEAD", all)

	steps := []map[string]string{
		{ // a directory "a" among files whose names extend "a"
			"a/x": "a/x", "a/y/z": "a/y/z", "a-b": "a-b", "a.b": "a.b", "a0": "a0", "a_b": "a_b",
			"A": "A", "B.txt": "B", "a/y.z": "a/y.z", "a/y-z": "a/y-z", "a/y0": "a/y0",
			"dir.d/x": "1", "dir/x": "2", "dir-x/y": "3", "dir0": "4", "dir_/z": "5",
			"n/e/s/t/e/d/deep.txt": "deep", "Z/Z": "ZZ", "é.md": "accent", "z": "z",
		},
		{ // more inside existing directories, a file named "a" in a subdirectory, a
			// directory "a.b" beside a file "a-b", and files replaced
			"a/y/z2": "new", "a/w": "w", "a/y/z": "a/y/z changed", "dir/a.b": "dir/a.b",
			"x/a": "x/a", "x/a.b/c": "x/a.b/c", "x/a-b": "x/a-b", "x/a0/d": "x/a0/d",
			"a.b": "a.b changed", "n/e/s/t/e/d/deeper/x": "deeper", "n/e/s/t/sibling": "s",
		},
		{ // names beside the ones of step 2, one level down
			"x/a.b/b": "b", "x/a.b/c.d": "cd", "x/a.c": "ac", "x/a_": "x/a_", "x/a00": "x/a00",
			"x/a0/d": "x/a0/d changed", "x/a0/c": "c", "x/a0.": "x/a0.",
		},
	}

	for i, step := range steps {
		var want []string
		for _, p := range sortedKeys(step) {
			if _, ok := all[p]; ok {
				want = append(want, "M\t"+p)
			} else {
				want = append(want, "A\t"+p)
			}
		}
		sort.Strings(want)
		all = merged(all, step)
		_, h := commitFiles(t, r, step, fmt.Sprintf("step %d\n", i))

		if got := revParse(t, dir, "HEAD"); got != h {
			t.Fatalf("step %d: HEAD = %s, Commit returned %s", i, got, h)
		}
		if got := revParse(t, dir, "HEAD^"); got != prev {
			t.Fatalf("step %d: HEAD^ = %s, want the old tip %s", i, got, prev)
		}
		assertFsck(t, dir)
		assertTree(t, dir, "HEAD", all)
		if got := nameStatus(t, dir, "HEAD^", "HEAD"); !equalStrings(got, want) {
			t.Errorf("step %d: git diff --name-status HEAD^ HEAD:\n got %q\nwant %q", i, got, want)
		}
		prev = h
	}
}

// Random names from an alphabet chosen to stress git's tree order, committed in rounds
// that add and replace files; git must agree on every tree.
func TestCommitsWithRandomNames(t *testing.T) {
	r, dir := newRepo(t)
	names := []string{"a", "a.b", "a-b", "a_b", "a0", "A", "ab", "a.", "b", "é", "a~", "a b", "-", "_"}
	rng := rand.New(rand.NewSource(1))
	all := map[string]string{}
	dirs := map[string]bool{}
	prev := plumbing.ZeroHash
	for round := 0; round < 5; round++ {
		step := map[string]string{}
		for len(step) < 40 {
			parts := make([]string, 1+rng.Intn(3))
			for i := range parts {
				parts[i] = names[rng.Intn(len(names))]
			}
			p := strings.Join(parts, "/")
			if dirs[p] || conflictsWithFile(all, step, parts) {
				continue
			}
			step[p] = fmt.Sprintf("%s in round %d", p, round)
			for i := 1; i < len(parts); i++ {
				dirs[strings.Join(parts[:i], "/")] = true
			}
		}
		// Replace a few files that exist.
		for _, p := range sortedKeys(all)[:min(5, len(all))] {
			step[p] = p + " replaced in round " + fmt.Sprint(round)
		}
		var want []string
		for _, p := range sortedKeys(step) {
			if _, ok := all[p]; ok {
				want = append(want, "M\t"+p)
			} else {
				want = append(want, "A\t"+p)
			}
		}
		sort.Strings(want)
		all = merged(all, step)
		_, h := commitFiles(t, r, step, fmt.Sprintf("round %d\n", round))

		assertFsck(t, dir)
		assertTree(t, dir, "HEAD", all)
		if !prev.IsZero() {
			if got := revParse(t, dir, "HEAD^"); got != prev {
				t.Fatalf("round %d: HEAD^ = %s, want %s", round, got, prev)
			}
			if got := nameStatus(t, dir, "HEAD^", "HEAD"); !equalStrings(got, want) {
				t.Errorf("round %d: git diff --name-status:\n got %q\nwant %q", round, got, want)
			}
		}
		prev = h
	}
}

// conflictsWithFile reports whether a directory on parts' way is a file already.
func conflictsWithFile(all, step map[string]string, parts []string) bool {
	for i := 1; i < len(parts); i++ {
		d := strings.Join(parts[:i], "/")
		if _, ok := all[d]; ok {
			return true
		}
		if _, ok := step[d]; ok {
			return true
		}
	}
	return false
}

func TestCommitIntoABigTreeChangesOnlyWhatItAdds(t *testing.T) {
	dir := t.TempDir()
	runGit(t, dir, "init", "-q", "-b", "main")
	base := map[string]string{}
	for i := 0; i < 2000; i++ {
		base[fmt.Sprintf("big/%04d.md", i)] = fmt.Sprint(i)
	}
	for d := 0; d < 50; d++ {
		for f := 0; f < 5; f++ {
			base[fmt.Sprintf("d%02d/f%d", d, f)] = fmt.Sprint(d, f)
		}
	}
	// git writes the tree (fast-import: writing 2,250 files to disk for `git add` is
	// slow), with what go-git must keep as it is: an executable and a symbolic link.
	var stream strings.Builder
	fmt.Fprintf(&stream, "commit refs/heads/main\ncommitter %s <%s> 1764489600 +0000\ndata 11\na big tree\n", humanName, humanEmail)
	inline := func(mode, path, data string) {
		fmt.Fprintf(&stream, "M %s inline %s\ndata %d\n%s\n", mode, path, len(data), data)
	}
	for _, p := range sortedKeys(base) {
		inline("100644", p, base[p])
	}
	inline("100755", "big/run.sh", "#!/bin/sh\n")
	inline("120000", "big/link", "0001.md")
	runGitStdin(t, dir, stream.String(), "fast-import", "--quiet")
	human := revParse(t, dir, "HEAD")
	if got := runGit(t, dir, "ls-tree", "HEAD", "big/run.sh", "big/link"); !strings.HasPrefix(got, "120000 ") || !strings.Contains(got, "\n100755 ") {
		t.Fatalf("git ls-tree = %q", got)
	}

	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	add := map[string]string{
		"big/2000.md":    "new in big",
		"big/0000.md.x":  "beside the first",
		"big/sub/x":      "a new dir in big",
		"d17/f9":         "new in d17",
		"d49/new/deep/x": "new deep",
		"new/file":       "new top dir",
	}
	_, h := commitFiles(t, r, add, "add six\n")

	if got := revParse(t, dir, "HEAD^"); got != human {
		t.Fatalf("HEAD^ = %s, want %s", got, human)
	}
	var want []string
	for _, p := range sortedKeys(add) {
		want = append(want, "A\t"+p)
	}
	if got := nameStatus(t, dir, "HEAD^", "HEAD"); !equalStrings(got, want) {
		t.Errorf("git diff --name-status HEAD^ HEAD:\n got %q\nwant %q", got, want)
	}
	if got := runGit(t, dir, "diff", "--summary", "HEAD^", "HEAD", "--", "big/run.sh", "big/link"); got != "" {
		t.Errorf("the executable or the link changed: %s", got)
	}
	if n := len(nonEmptyLines(runGit(t, dir, "ls-tree", "-r", "--name-only", h.String()))); n != len(base)+2+len(add) {
		t.Errorf("HEAD has %d files, want %d", n, len(base)+2+len(add))
	}
	assertFsck(t, dir)
}

func TestPutReplacesAFile(t *testing.T) {
	r, dir := newRepo(t)
	commitFiles(t, r, map[string]string{"notes/a.md": "old\n", "notes/b.md": "b\n"}, "one\n")
	d, _ := commitFiles(t, r, map[string]string{"notes/a.md": "new\n"}, "two\n")

	if got := nameStatus(t, dir, "HEAD^", "HEAD"); !equalStrings(got, []string{"M\tnotes/a.md"}) {
		t.Errorf("git diff --name-status = %q, want M notes/a.md", got)
	}
	assertTree(t, dir, "HEAD", map[string]string{"notes/a.md": "new\n", "notes/b.md": "b\n"})
	if ch := d.Changes(); len(ch) != 1 || ch[0].Path != "notes/a.md" || string(ch[0].Data) != "new\n" {
		t.Errorf("Changes = %+v", ch)
	}
	assertFsck(t, dir)
}

func TestPutTwiceKeepsTheLastData(t *testing.T) {
	r, dir := newRepo(t)
	branch := branchOf(t, r)
	d, err := r.NewDraft(plumbing.ZeroHash)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"one", "two", "three"} {
		if err := d.Put("p/f", []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.Commit(branch, "m\n", when(0)); err != nil {
		t.Fatal(err)
	}
	assertTree(t, dir, "HEAD", map[string]string{"p/f": "three"})
	assertFsck(t, dir)
}

func TestExists(t *testing.T) {
	r, _ := newRepo(t)
	_, tip := commitFiles(t, r, map[string]string{"README": "r", "a/b/c.md": "c", "a/d": "d"}, "m\n")
	d, err := r.NewDraft(tip)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Put("new/deep/f", []byte("f")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"README", true},
		{"a", true},
		{"a/b", true},
		{"a/b/c.md", true},
		{"a/d", true},
		{"new", true}, // added to the draft, not yet written
		{"new/deep", true},
		{"new/deep/f", true},
		{"missing", false},
		{"a/missing", false},
		{"a/b/missing/x", false},
		{"A", false}, // git paths are case-sensitive
		{"readme", false},
		{"a/b/c", false},
		{"new/deep/g", false},
	} {
		got, err := d.Exists(tc.path)
		if err != nil || got != tc.want {
			t.Errorf("Exists(%q) = %v, %v; want %v", tc.path, got, err, tc.want)
		}
	}
	// Below a file nothing can exist, and nothing can be put.
	for _, p := range []string{"README/x", "a/d/x/y", "new/deep/f/g"} {
		if got, _ := d.Exists(p); got {
			t.Errorf("Exists(%q) = true below a file", p)
		}
		if err := d.Put(p, []byte("x")); err == nil {
			t.Errorf("Put(%q) below a file succeeded", p)
		}
	}
}

func TestPutRefusesAFileWhereADirectoryIs(t *testing.T) {
	r, dir := newRepo(t)
	_, tip := commitFiles(t, r, map[string]string{"old/x": "x"}, "m\n")
	d, err := r.NewDraft(tip)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Put("new/x", []byte("x")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"old", "new"} {
		if err := d.Put(p, []byte("a file over a directory")); err == nil {
			t.Errorf("Put(%q) over a directory succeeded", p)
		}
	}
	if _, err := d.Commit(branchOf(t, r), "m\n", when(1)); err != nil {
		t.Fatal(err)
	}
	assertTree(t, dir, "HEAD", map[string]string{"old/x": "x", "new/x": "x"})
	if ch := d.Changes(); len(ch) != 1 || ch[0].Path != "new/x" {
		t.Errorf("Changes = %+v, want only new/x", ch)
	}
	assertFsck(t, dir)
}

func TestPutRefusesUnsafePaths(t *testing.T) {
	r, dir := newRepo(t)
	base := map[string]string{"README": "r"}
	_, tip := commitFiles(t, r, base, "m\n")
	d, err := r.NewDraft(tip)
	if err != nil {
		t.Fatal(err)
	}
	unsafe := []string{
		"", "/abs", "../x", "a/../b", "a//b", "a/", "./a", "a/./b", ".", "..",
		".git", ".git/config", "a/.GIT/x", ".Git/hooks/pre-commit",
		"a\\b", "..\\x", "x\x00y",
		// Names that git fsck reports as .git because Windows or macOS read them so.
		".git./config", ".git /config", ".git...", "git~1/config", "GIT~1", ".git::$INDEX_ALLOCATION/x",
		".g\u200cit/config", "\ufeff.git", ".GI\u200dT",
	}
	for _, p := range unsafe {
		if err := d.Put(p, []byte("x")); err == nil {
			t.Errorf("Put(%q) succeeded", p)
		}
	}
	if ch := d.Changes(); len(ch) != 0 {
		t.Errorf("refused paths are in Changes: %+v", ch)
	}
	if _, err := d.Commit(branchOf(t, r), "m\n", when(1)); err != nil {
		t.Fatal(err)
	}
	assertTree(t, dir, "HEAD", base)
	assertFsck(t, dir)

	// Materialize refuses them too, and writes nothing outside the worktree.
	for _, p := range unsafe {
		if err := r.Materialize([]Change{{Path: p, Data: []byte("x")}}); err == nil {
			t.Errorf("Materialize(%q) succeeded", p)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "x")); err == nil {
		t.Errorf("Materialize wrote outside the worktree")
	}
	if data, _ := os.ReadFile(filepath.Join(dir, ".git", "config")); string(data) == "x" {
		t.Errorf("Materialize overwrote .git/config")
	}
}

// Names with dots, dashes and the like that are not .git are fine.
func TestPutAcceptsNamesThatOnlyLookLikeGit(t *testing.T) {
	r, dir := newRepo(t)
	files := map[string]string{
		".gitignore": "x", ".github/x": "x", "a/.gitkeep": "x", "git": "x", ".git-x": "x",
		"x.git": "x", "git~2": "x", ".gitt": "x", "..a": "x", "a..b": "x", "...": "x",
	}
	commitFiles(t, r, files, "m\n")
	assertTree(t, dir, "HEAD", files)
	assertFsck(t, dir)
}

func TestCommitRefusesAMovedBranch(t *testing.T) {
	r, dir := newRepo(t)
	branch := branchOf(t, r)
	d0, tip := commitFiles(t, r, map[string]string{"README": "r"}, "m\n")
	if err := r.Materialize(d0.Changes()); err != nil {
		t.Fatal(err)
	}

	d, err := r.NewDraft(tip)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Put("mem/a.md", []byte("a")); err != nil {
		t.Fatal(err)
	}
	writeWorktree(t, dir, map[string]string{"human.txt": "typed by a person\n"})
	runGit(t, dir, "add", "human.txt")
	runGit(t, dir, "commit", "-q", "-m", "a person commits meanwhile")
	human := revParse(t, dir, "HEAD")

	if _, err := d.Commit(branch, "agmem\n", when(1)); !errors.Is(err, ErrRefMoved) {
		t.Fatalf("Commit on a moved branch = %v, want ErrRefMoved", err)
	}
	if got := revParse(t, dir, "refs/heads/main"); got != human {
		t.Errorf("main = %s after a refused commit, want the person's %s", got, human)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "refs", "heads", "main.lock")); err == nil {
		t.Errorf("the ref lock was left behind")
	}
	assertFsck(t, dir)

	// Built again on the person's tip, it goes in on top of it.
	d2, h := commitFiles(t, r, map[string]string{"mem/a.md": "a"}, "agmem\n")
	if got := revParse(t, dir, "HEAD^"); got != human {
		t.Errorf("rebuilt commit's parent = %s, want %s", got, human)
	}
	if got := revParse(t, dir, "HEAD"); got != h {
		t.Errorf("HEAD = %s, want %s", got, h)
	}
	assertTree(t, dir, "HEAD", map[string]string{"README": "r", "human.txt": "typed by a person\n", "mem/a.md": "a"})
	if err := r.Materialize(d2.Changes()); err != nil {
		t.Fatal(err)
	}
	if got := runGit(t, dir, "status", "--porcelain"); got != "" {
		t.Errorf("git status --porcelain:\n%s", got)
	}
	assertFsck(t, dir)
}

func TestCommitWithPackedRefs(t *testing.T) {
	r, dir := newRepo(t)
	branch := branchOf(t, r)
	_, t1 := commitFiles(t, r, map[string]string{"a": "a"}, "one\n")
	stale, err := r.NewDraft(t1)
	if err != nil {
		t.Fatal(err)
	}
	if err := stale.Put("stale", []byte("s")); err != nil {
		t.Fatal(err)
	}

	runGit(t, dir, "pack-refs", "--all")
	loose := filepath.Join(dir, ".git", "refs", "heads", "main")
	if _, err := os.Stat(loose); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("git pack-refs left %s: %v", loose, err)
	}
	if tip, err := r.Tip(branch); err != nil || tip != t1 {
		t.Fatalf("Tip with packed refs = %s, %v; want %s", tip, err, t1)
	}

	_, t2 := commitFiles(t, r, map[string]string{"b": "b"}, "two\n")
	if got := revParse(t, dir, "main"); got != t2 {
		t.Errorf("main = %s, want %s", got, t2)
	}
	if got := revParse(t, dir, "main^"); got != t1 {
		t.Errorf("main^ = %s, want %s", got, t1)
	}
	assertTree(t, dir, "main", map[string]string{"a": "a", "b": "b"})
	assertFsck(t, dir)

	// Packed again, the branch still refuses a draft built on the old tip.
	runGit(t, dir, "pack-refs", "--all")
	if _, err := stale.Commit(branch, "stale\n", when(3)); !errors.Is(err, ErrRefMoved) {
		t.Errorf("Commit of a stale draft with packed refs = %v, want ErrRefMoved", err)
	}
	if got := revParse(t, dir, "main"); got != t2 {
		t.Errorf("main = %s after a refused commit, want %s", got, t2)
	}
	if got := strings.TrimSpace(runGit(t, dir, "for-each-ref", "--format=%(refname) %(objectname)")); got != "refs/heads/main "+t2.String() {
		t.Errorf("git for-each-ref = %q", got)
	}
	assertFsck(t, dir)
}

func TestCommitOnAnotherBranch(t *testing.T) {
	dir := t.TempDir()
	runGit(t, dir, "init", "-q", "-b", "feature/memory")
	r, _, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, h := commitFiles(t, r, map[string]string{"x": "x"}, "m\n")
	if got := revParse(t, dir, "refs/heads/feature/memory"); got != h {
		t.Errorf("feature/memory = %s, want %s", got, h)
	}
	assertFsck(t, dir)
}

func TestCommitWaitsForTheBranchLock(t *testing.T) {
	r, dir := newRepo(t)
	_, tip := commitFiles(t, r, map[string]string{"a": "a"}, "one\n")
	lock := filepath.Join(dir, ".git", "refs", "heads", "main.lock")

	// A lock git lets go of soon: the commit waits for it, then goes in.
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	released := make(chan error, 1)
	go func() {
		time.Sleep(200 * time.Millisecond)
		released <- os.Remove(lock)
	}()
	_, h := commitFiles(t, r, map[string]string{"b": "b"}, "two\n")
	if err := <-released; err != nil {
		t.Fatalf("the lock was not there to release: %v", err)
	}
	if got := revParse(t, dir, "main^"); got != tip {
		t.Errorf("main^ = %s, want %s", got, tip)
	}
	if got := revParse(t, dir, "main"); got != h {
		t.Errorf("main = %s, want %s", got, h)
	}
	assertFsck(t, dir)
}

// A branch lock an agmem process left when it was killed is taken over.
func TestCommitTakesOverABranchLockAgmemLeft(t *testing.T) {
	r, dir := newRepo(t)
	commitFiles(t, r, map[string]string{"a": "a"}, "one\n")
	ref := filepath.Join(dir, ".git", "refs", "heads", "main")
	left, err := r.takeLock(ref)
	if err != nil {
		t.Fatal(err)
	}
	left.Close() // the process "died" holding it
	_, h := commitFiles(t, r, map[string]string{"b": "b"}, "two\n")
	if got := revParse(t, dir, "main"); got != h {
		t.Errorf("main = %s, want %s", got, h)
	}
	if _, err := os.Stat(ref + ".lock"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the left lock is still there: %v", err)
	}
	assertFsck(t, dir)
}

func TestCommitGivesUpOnAHeldBranchLock(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the lock for about 2 s")
	}
	r, dir := newRepo(t)
	branch := branchOf(t, r)
	_, tip := commitFiles(t, r, map[string]string{"a": "a"}, "one\n")
	d, err := r.NewDraft(tip)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Put("b", []byte("b")); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, ".git", "refs", "heads", "main.lock")
	if err := os.WriteFile(lock, []byte("held\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Commit(branch, "two\n", when(2)); !errors.Is(err, ErrRefLocked) {
		t.Fatalf("Commit under a held lock = %v, want ErrRefLocked", err)
	}
	if got := revParse(t, dir, "main"); got != tip {
		t.Errorf("main = %s, want it unmoved at %s", got, tip)
	}
	if data, err := os.ReadFile(lock); err != nil || string(data) != "held\n" {
		t.Errorf("another process's lock was touched: %q, %v", data, err)
	}
	os.Remove(lock)
	// The draft was not spent: with the lock gone it commits.
	h, err := d.Commit(branch, "two\n", when(2))
	if err != nil {
		t.Fatal(err)
	}
	if got := revParse(t, dir, "main"); got != h {
		t.Errorf("main = %s, want %s", got, h)
	}
	assertFsck(t, dir)
}

func TestAddedFiles(t *testing.T) {
	r, dir := newRepo(t)
	first := map[string]string{"README": "r", "a/b/c": "c", "a/d": "d", "z": "z"}
	_, h1 := commitFiles(t, r, first, "one\n")

	got, err := r.AddedFiles(h1)
	if err != nil {
		t.Fatal(err)
	}
	assertChanges(t, "first commit", got, first)
	// git agrees that these are all the files.
	if paths := nonEmptyLines(runGit(t, dir, "ls-tree", "-r", "--name-only", h1.String())); !equalStrings(paths, sortedKeys(first)) {
		t.Errorf("git ls-tree = %q", paths)
	}

	second := map[string]string{
		"a/d":             "d replaced",
		"a/b/new":         "new",
		"a/e/f/g":         "g",
		"n/1":             "1",
		"n/2":             "2",
		"n/deep/er/3":     "3",
		"current/x.md":    "x",
		"sessions/s/b.js": "{}",
	}
	_, h2 := commitFiles(t, r, merged(second, map[string]string{"z": "z"}), "two\n") // z: same data, no change
	got, err = r.AddedFiles(h2)
	if err != nil {
		t.Fatal(err)
	}
	assertChanges(t, "second commit", got, second)
	var fromGit []string
	for _, l := range nameStatus(t, dir, h1.String(), h2.String()) {
		fromGit = append(fromGit, l[2:])
	}
	sort.Strings(fromGit)
	if !equalStrings(fromGit, sortedKeys(second)) {
		t.Errorf("git diff --name-only = %q, want %q", fromGit, sortedKeys(second))
	}
}

// TestAddedFilesPassesOverUnsafeNames: a fetched branch's tree may name an entry ".."
// or ".git" (git mktree takes it, git fsck only warns): no path through one is given.
func TestAddedFilesPassesOverUnsafeNames(t *testing.T) {
	r, dir := newRepo(t)
	blob := strings.TrimSpace(runGitStdin(t, dir, "evil", "hash-object", "-w", "--stdin"))
	inner := strings.TrimSpace(runGitStdin(t, dir, "100644 blob "+blob+"\tX.jsonl\n", "mktree"))
	sessions := strings.TrimSpace(runGitStdin(t, dir, "040000 tree "+inner+"\t..\n040000 tree "+inner+"\t.git\n100644 blob "+blob+"\tok.jsonl\n", "mktree"))
	root := strings.TrimSpace(runGitStdin(t, dir, "040000 tree "+sessions+"\tsessions\n", "mktree"))
	commit := strings.TrimSpace(runGit(t, dir, "commit-tree", root, "-m", "a fetched branch's"))
	got, err := r.AddedFiles(plumbing.NewHash(commit))
	if err != nil {
		t.Fatal(err)
	}
	assertChanges(t, "a tree with unsafe names", got, map[string]string{"sessions/ok.jsonl": "evil"})
}

func assertChanges(t *testing.T, what string, got []Change, want map[string]string) {
	t.Helper()
	gotMap := map[string]string{}
	for _, c := range got {
		if _, dup := gotMap[c.Path]; dup {
			t.Errorf("%s: %s twice", what, c.Path)
		}
		gotMap[c.Path] = string(c.Data)
	}
	if !equalStrings(sortedKeys(gotMap), sortedKeys(want)) {
		t.Fatalf("%s: paths %q, want %q", what, sortedKeys(gotMap), sortedKeys(want))
	}
	for p, data := range want {
		if gotMap[p] != data {
			t.Errorf("%s: %s = %q, want %q", what, p, gotMap[p], data)
		}
	}
}

// batchCommit commits files with a message made by FormatMessage, and returns it.
func batchCommit(t *testing.T, r *Git, body, batch string, files ...string) plumbing.Hash {
	t.Helper()
	m := map[string]string{}
	for _, f := range files {
		m[f] = f
	}
	msg := FormatMessage("Auto-commit: "+batch, body, []Trailer{
		{TrailerSession, "s"}, {TrailerObservations, "1"}, {TrailerBatch, batch}, {TrailerAutoCommit, "true"},
	})
	_, h := commitFiles(t, r, m, msg)
	return h
}

func TestFindBatch(t *testing.T) {
	r, dir := newRepo(t)
	rec := func(batch string) string { return "sessions/s/" + batch + ".jsonl" }

	old := batchCommit(t, r, "", "B-old", rec("B-old"))
	base := batchCommit(t, r, "", "B-base", rec("B-base"))
	// The body names a batch and the tree holds its record, but the trailer block says
	// otherwise: a forgery, not the batch's commit.
	forged := batchCommit(t, r, "pasted by a person:\nAgmem-Batch: B-forged", "B-3", rec("B-forged"), rec("B-3"))
	// The trailer says B-norec but the record is not in the tree.
	norec := batchCommit(t, r, "", "B-norec", "elsewhere/file")
	// A later commit adds B-norec's record under another batch: still not B-norec's.
	b5 := batchCommit(t, r, "", "B5", rec("B5"), rec("B-norec"))
	writeWorktree(t, dir, map[string]string{"human.txt": "h"})
	runGit(t, dir, "add", "human.txt")
	// Its last paragraph is not a trailer block (a line of it is not a trailer).
	runGit(t, dir, "commit", "-q", "-m", "a person's commit\n\nAgmem-Batch: B5\nnot a trailer")
	if got := runGit(t, dir, "log", "-1", "--format=%(trailers)"); strings.TrimSpace(got) != "" {
		t.Fatalf("git reads trailers %q in the person's commit", got)
	}
	b6 := batchCommit(t, r, "", "B6", rec("B6"))
	tip := revParse(t, dir, "HEAD")
	if tip != b6 {
		t.Fatalf("HEAD = %s, want %s", tip, b6)
	}
	// git reads the trailers the way FindBatch must.
	if got := strings.TrimSpace(runGit(t, dir, "log", "-1", "--format=%(trailers:key=Agmem-Batch,valueonly)", forged.String())); got != "B-3" {
		t.Fatalf("git reads the forged commit's batch as %q", got)
	}

	for _, tc := range []struct {
		name   string
		base   plumbing.Hash
		batch  string
		want   plumbing.Hash
		wantOK bool
	}{
		{"the tip", base, "B6", b6, true},
		{"below a person's commit", base, "B5", b5, true},
		{"body, not trailer", base, "B-forged", plumbing.ZeroHash, false},
		{"trailer without record", base, "B-norec", plumbing.ZeroHash, false},
		{"trailer of a forged commit", base, "B-3", forged, true},
		{"the base itself", base, "B-base", plumbing.ZeroHash, false},
		{"older than base", base, "B-old", plumbing.ZeroHash, false},
		{"older, no base", plumbing.ZeroHash, "B-old", old, true},
		{"base, no base", plumbing.ZeroHash, "B-base", base, true},
		{"base not in history", plumbing.NewHash("1111111111111111111111111111111111111111"), "B-old", old, true},
		{"unknown batch", plumbing.ZeroHash, "B-none", plumbing.ZeroHash, false},
		{"empty batch", plumbing.ZeroHash, "", plumbing.ZeroHash, false},
	} {
		h, ok, err := r.FindBatch(tip, tc.base, tc.batch, []string{rec(tc.batch)})
		if err != nil || ok != tc.wantOK || h != tc.want {
			t.Errorf("%s: FindBatch(%s) = %s, %v, %v; want %s, %v", tc.name, tc.batch, h, ok, err, tc.want, tc.wantOK)
		}
	}
	if _, ok, err := r.FindBatch(norec, base, "B5", []string{rec("B5")}); ok || err != nil {
		t.Errorf("FindBatch below the batch's commit = %v, %v; want not found", ok, err)
	}
	if _, ok, err := r.FindBatch(plumbing.ZeroHash, plumbing.ZeroHash, "B6", []string{rec("B6")}); ok || err != nil {
		t.Errorf("FindBatch on an unborn branch = %v, %v", ok, err)
	}
}

// git reflog shows agmem's commits, with their subjects, as it shows git's own.
func TestPublishWritesTheReflog(t *testing.T) {
	r, dir := newRepo(t)
	commitFiles(t, r, map[string]string{"a": "a"}, "first subject\n")
	_, h := commitFiles(t, r, map[string]string{"b": "b"}, "second subject\n\nbody\n")
	got := nonEmptyLines(runGit(t, dir, "reflog", "--format=%H %gs", "main"))
	if len(got) != 2 || got[0] != h.String()+" agmem: second subject" || !strings.HasSuffix(got[1], " agmem: first subject") {
		t.Errorf("git reflog main = %q", got)
	}
	if head := revParse(t, dir, "HEAD@{1}"); head != revParse(t, dir, "main~1") {
		t.Errorf("HEAD@{1} = %s, want main~1", head)
	}
}

// Each publish writes a pack; past maxPacks of them they are merged,
// and every object stays readable, to go-git and to git.
func TestMergePacksBoundsTheirNumber(t *testing.T) {
	r, dir := newRepo(t)
	var last plumbing.Hash
	for i := 0; i <= maxPacks+1; i++ {
		_, last = commitFiles(t, r, map[string]string{fmt.Sprintf("f%02d", i): fmt.Sprint(i)}, fmt.Sprintf("c%d\n", i))
	}
	if err := r.MergePacks(); err != nil {
		t.Fatal(err)
	}
	packs, err := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*.pack"))
	if err != nil {
		t.Fatal(err)
	}
	if len(packs) > maxPacks {
		t.Errorf("%d packs after %d publishes, want them merged", len(packs), maxPacks+2)
	}
	for _, p := range packs {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o444 {
			t.Errorf("%s: mode %v, %v; git's packs are read-only", p, fi.Mode(), err)
		}
	}
	if got := len(nonEmptyLines(runGit(t, dir, "ls-tree", "-r", "--name-only", last.String()))); got != maxPacks+2 {
		t.Errorf("the last tree lists %d files, want %d", got, maxPacks+2)
	}
	if files, err := r.AddedFiles(last); err != nil || len(files) != 1 {
		t.Errorf("go-git reads the last commit back: %d files, %v", len(files), err)
	}
	assertFsck(t, dir)
}

// A process killed inside writePack leaves at most an .idx without its .pack (the .idx
// goes in place first). git and go-git both pass over such an .idx; a .pack without
// its .idx would stop go-git from opening the repository at all.
func TestAnIndexLeftWithoutItsPackIsPassedOver(t *testing.T) {
	r, dir := newRepo(t)
	_, h := commitFiles(t, r, map[string]string{"a": "a"}, "one\n")
	idxs, err := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*.idx"))
	if err != nil || len(idxs) == 0 {
		t.Fatalf("no pack index: %v", err)
	}
	data, err := os.ReadFile(idxs[0])
	if err != nil {
		t.Fatal(err)
	}
	orphan := filepath.Join(dir, ".git", "objects", "pack", "pack-"+strings.Repeat("ab", 20)+".idx")
	if err := os.WriteFile(orphan, data, 0o444); err != nil {
		t.Fatal(err)
	}
	reopened, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if files, err := reopened.AddedFiles(h); err != nil || len(files) != 1 {
		t.Errorf("go-git reads the commit beside an orphan .idx: %d files, %v", len(files), err)
	}
	_, h2 := commitFiles(t, reopened, map[string]string{"b": "b"}, "two\n")
	if got := revParse(t, dir, "main"); got != h2 {
		t.Errorf("main = %s, want %s", got, h2)
	}
	assertFsck(t, dir)
}

// The same object in two small packs (a flush rebuilt after a crash writes its blobs
// again) is written once into the merged pack: git refuses a pack whose header counts
// more objects than its index.
func TestMergedPackHoldsEachObjectOnce(t *testing.T) {
	r, dir := newRepo(t)
	for i := 0; i <= maxPacks+1; i++ {
		_, tip, err := r.Head()
		if err != nil {
			t.Fatal(err)
		}
		d, err := r.NewDraft(tip)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Put("same", []byte("the same blob in every pack")); err != nil {
			t.Fatal(err)
		}
		if err := d.Put(fmt.Sprintf("f%02d", i), []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Commit(branchOf(t, r), fmt.Sprintf("c%d\n", i), when(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.MergePacks(); err != nil {
		t.Fatal(err)
	}
	runGit(t, dir, "cat-file", "-e", "HEAD:same")
	assertFsck(t, dir)
	for _, idx := range globPacks(t, dir, "idx") {
		runGit(t, dir, "verify-pack", idx)
	}
}

func globPacks(t *testing.T, dir, ext string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*."+ext))
	if err != nil {
		t.Fatal(err)
	}
	return names
}
