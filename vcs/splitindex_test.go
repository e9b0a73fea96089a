package vcs

import (
	"crypto/sha1"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The index tests again, with every index split: each Materialize links to a shared
// index, and folds into a new one as its own entries grow (a few entries are more
// than maxShareChange of a small shared index).
func TestMaterializeSplit(t *testing.T) {
	defer func(n int) { splitIndexFrom = n }(splitIndexFrom)
	splitIndexFrom = 1
	for name, test := range map[string]func(*testing.T){
		"MakesTheWorktreeClean":         TestMaterializeMakesTheWorktreeClean,
		"AddedFiles":                    TestMaterializeAddedFiles,
		"KeepsWhatAPersonStaged":        TestMaterializeKeepsWhatAPersonStaged,
		"ReplacesATrackedGitignoreOnce": TestMaterializeReplacesATrackedGitignoreOnce,
		"KeepsAConflictedMerge":         TestMaterializeKeepsAConflictedMerge,
		"AgainKeepsAHandEdit":           TestMaterializeAgainKeepsAHandEdit,
	} {
		t.Run(name, func(t *testing.T) {
			test(t)
		})
	}
}

// assertIndexIsHead checks that the index holds what HEAD does, n files, at stage 0.
func assertIndexIsHead(t *testing.T, dir string, n int) {
	t.Helper()
	index := lsFiles(t, dir)
	tree := nonEmptyLines(runGit(t, dir, "-c", "core.quotePath=false", "ls-tree", "-r", "HEAD"))
	for _, l := range tree { // "mode blob hash\tpath"
		info, path, _ := strings.Cut(l, "\t")
		f := strings.Fields(info)
		if want := f[0] + " " + f[2] + " 0"; index[path] != want {
			t.Errorf("git ls-files -s %s = %q, want %q", path, index[path], want)
		}
	}
	if len(index) != n || len(tree) != n {
		t.Errorf("the index has %d entries, HEAD %d files, want %d", len(index), len(tree), n)
	}
}

// sharedIndexes are the shared index files in dir's .git.
func sharedIndexes(t *testing.T, dir string) []string {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(dir, ".git", "sharedindex.*"))
	return names
}

// Many flushes into a big index: each writes a small index beside one shared index,
// which git reads as the whole (ls-files, status); past maxShareChange of the shared
// index's size, the own entries are folded into a new shared index and the old one
// removed.
func TestSplitIndexStaysSmallAndFolds(t *testing.T) {
	defer func(n int) { splitIndexFrom = n }(splitIndexFrom)
	splitIndexFrom = 200
	r, dir := newRepo(t)
	all := map[string]string{}
	// A shared index that 60 entries of its own are maxShareChange of: rounds of 20
	// fold first in the fourth, then every third.
	sharedSize := int(math.Round(60 / maxShareChange))
	base := numbered("current/episodic/2026-01-01/", sharedSize)
	d, _ := commitFiles(t, r, base, "base\n")
	if err := r.Materialize(d.Changes()); err != nil {
		t.Fatal(err)
	}
	all = merged(all, base)
	shared := sharedIndexes(t, dir)
	if len(shared) != 1 {
		t.Fatalf("shared indexes after %d entries: %q", sharedSize, shared)
	}
	folded := false
	for round := range 8 {
		files := numbered(fmt.Sprintf("current/semantic/2026-01-%02d/", round+2), 20)
		d, _ := commitFiles(t, r, files, fmt.Sprintf("round %d\n", round))
		if err := r.Materialize(d.Changes()); err != nil {
			t.Fatal(err)
		}
		all = merged(all, files)
		assertClean(t, dir)
		assertIndexIsHead(t, dir, len(all))

		now := sharedIndexes(t, dir)
		if len(now) != 1 {
			t.Fatalf("round %d: shared indexes %q", round, now)
		}
		fi, _ := os.Stat(filepath.Join(dir, ".git", "index"))
		if own := (round%3 + 1) * 20; now[0] == shared[0] && fi.Size() > int64(own*150+1000) {
			t.Errorf("round %d: the index is %d bytes beside its shared index", round, fi.Size())
		}
		folded = folded || now[0] != shared[0]
		shared = now
	}
	if !folded {
		t.Errorf("160 entries added to a shared index of %d: never folded", sharedSize)
	}
	assertFsck(t, dir)
	runGit(t, dir, "update-index", "--refresh") // git reads and rewrites it as its own
	assertClean(t, dir)
}

// A split index git wrote, with a shared entry it replaced (git add of a changed file)
// and one it left out (git rm --cached), is read as git reads it: agmem's entries join
// it and the person's staged changes stay.
func TestMaterializeKeepsASplitIndexGitWrote(t *testing.T) {
	dir := t.TempDir()
	runGit(t, dir, "init", "-q", "-b", "main")
	files := numbered("notes/", 40)
	writeWorktree(t, dir, files)
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "person")
	runGit(t, dir, "update-index", "--split-index")
	writeWorktree(t, dir, map[string]string{"big/notes/003.md": "changed\n"})
	runGit(t, dir, "add", "big/notes/003.md")
	runGit(t, dir, "rm", "-q", "--cached", "big/notes/007.md")
	if len(sharedIndexes(t, dir)) != 1 {
		t.Fatal("git wrote no shared index")
	}
	staged := lsFiles(t, dir, "big/notes/003.md")

	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	agmem := map[string]string{"mem/a.md": "a\n", "big/notes/030.md": "agmem's now\n"}
	d, _ := commitFiles(t, r, agmem, "agmem\n")
	if err := r.Materialize(d.Changes()); err != nil {
		t.Fatal(err)
	}
	if got := nonEmptyLines(runGit(t, dir, "status", "--porcelain")); !equalStrings(got, []string{"M  big/notes/003.md", "D  big/notes/007.md", "?? big/notes/007.md"}) {
		t.Errorf("git status --porcelain = %q", got)
	}
	if got := lsFiles(t, dir, "big/notes/003.md"); got["big/notes/003.md"] != staged["big/notes/003.md"] {
		t.Errorf("the staged entry changed: %q, was %q", got, staged)
	}
	assertIndexHolds(t, dir, map[string]string{"mem/a.md": "", "big/notes/030.md": "", "big/notes/001.md": ""})
	if n := len(lsFiles(t, dir)); n != 40 {
		t.Errorf("the index has %d entries, want 40 (41 files, one removed by the person)", n)
	}
	// Read again as agmem left it: the same changes find their files recorded.
	r2, _ := Open(dir)
	if err := r2.Materialize(d.Changes()); err != nil {
		t.Fatal(err)
	}
	if n := len(lsFiles(t, dir)); n != 40 {
		t.Errorf("again: the index has %d entries, want 40", n)
	}
}

// core.splitIndex = false: the index is written whole, and the shared index it linked
// to is removed; true: even a small index is split.
func TestSplitIndexFollowsCoreSplitIndex(t *testing.T) {
	defer func(n int) { splitIndexFrom = n }(splitIndexFrom)
	splitIndexFrom = 10
	r, dir := newRepo(t)
	d, _ := commitFiles(t, r, numbered("a/", 20), "one\n")
	if err := r.Materialize(d.Changes()); err != nil {
		t.Fatal(err)
	}
	if len(sharedIndexes(t, dir)) != 1 {
		t.Fatal("20 entries past a bound of 10: not split")
	}
	runGit(t, dir, "config", "core.splitIndex", "false")
	d, _ = commitFiles(t, r, numbered("b/", 3), "two\n")
	if err := r.Materialize(d.Changes()); err != nil {
		t.Fatal(err)
	}
	if got := sharedIndexes(t, dir); len(got) != 0 {
		t.Errorf("core.splitIndex = false: %q left", got)
	}
	data, _ := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if strings.Contains(string(data), "link") {
		t.Errorf("core.splitIndex = false: the index links to a shared one")
	}
	assertClean(t, dir)
	assertIndexHolds(t, dir, merged(numbered("a/", 20), numbered("b/", 3)))

	splitIndexFrom = 1000
	runGit(t, dir, "config", "core.splitIndex", "true")
	d, _ = commitFiles(t, r, numbered("c/", 3), "three\n")
	if err := r.Materialize(d.Changes()); err != nil {
		t.Fatal(err)
	}
	if len(sharedIndexes(t, dir)) != 1 {
		t.Errorf("core.splitIndex = true: not split")
	}
	assertClean(t, dir)
}

// A damaged split index or shared index is an error, never a crash: every byte of the
// link extension changed (the index's checksum made right again), and the shared index
// cut at every length.
func TestDamagedSplitIndexIsAnError(t *testing.T) {
	defer func(n int) { splitIndexFrom = n }(splitIndexFrom)
	splitIndexFrom = 1
	r, dir := newRepo(t)
	d, _ := commitFiles(t, r, numbered("a/", 30), "one\n")
	if err := r.Materialize(d.Changes()); err != nil {
		t.Fatal(err)
	}
	d, _ = commitFiles(t, r, numbered("b/", 2), "two\n")
	if err := r.Materialize(d.Changes()); err != nil {
		t.Fatal(err)
	}
	gitDir := filepath.Join(dir, ".git")
	index, _ := os.ReadFile(filepath.Join(gitDir, "index"))
	if _, err := readIndex(index, gitDir); err != nil {
		t.Fatal(err)
	}
	link := strings.Index(string(index), "link")
	if link < 0 {
		t.Fatal("no link extension")
	}
	for i := link + 8; i < len(index)-20; i++ {
		for _, b := range []byte{0x00, 0xff, index[i] ^ 0x01} {
			bad := append([]byte(nil), index...)
			bad[i] = b
			sum := sha1.Sum(bad[:len(bad)-20])
			copy(bad[len(bad)-20:], sum[:])
			if x, err := readIndex(bad, gitDir); err == nil {
				x.close()
			}
		}
	}
	shared := sharedIndexes(t, dir)[0]
	whole, _ := os.ReadFile(shared)
	os.Chmod(shared, 0o644)
	for n := 0; n < len(whole); n += 7 {
		os.WriteFile(shared, whole[:n], 0o644)
		if x, err := readIndex(index, gitDir); err == nil {
			x.close()
			t.Fatalf("a shared index cut to %d of %d bytes: no error", n, len(whole))
		}
	}
}
