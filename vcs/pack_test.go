package vcs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// putAll puts each file into the draft, the test failing on an error.
func putAll(t *testing.T, d *Draft, files map[string]string) {
	t.Helper()
	for _, p := range sortedKeys(files) {
		if err := d.Put(p, []byte(files[p])); err != nil {
			t.Fatalf("Put(%q): %v", p, err)
		}
	}
}

// numbered is n files big/<prefix>NNN.md.
func numbered(prefix string, n int) map[string]string {
	files := map[string]string{}
	for i := 0; i < n; i++ {
		files[fmt.Sprintf("big/%s%03d.md", prefix, i)] = fmt.Sprintf("%s %d\n", prefix, i)
	}
	return files
}

// The commits of one draft share a big directory: each version after the first is
// stored as a delta against the one before, and git and go-git read every version whole,
// with files, a subdirectory and names that sort around it ("sub" < "sub.md" < "sub/").
func TestVersionsOfABigDirectoryAreDeltas(t *testing.T) {
	r, dir := newRepo(t)
	d, err := r.NewDraft(plumbing.ZeroHash)
	if err != nil {
		t.Fatal(err)
	}
	want := merged(numbered("f", 300), map[string]string{"big/sub.md": "s\n", "big/sub/x.md": "x\n", "README": "r\n"})
	putAll(t, d, want)
	commits := []plumbing.Hash{}
	h, err := d.Seal("first\n", when(0))
	if err != nil {
		t.Fatal(err)
	}
	commits = append(commits, h)
	added := []map[string]string{want}
	for k := 1; k <= 4; k++ {
		add := merged(numbered(fmt.Sprintf("g%d-", k), 10), map[string]string{
			"big/f000.md":                    fmt.Sprintf("replaced %d\n", k),
			fmt.Sprintf("big/sub/y%d.md", k): "y\n",
			fmt.Sprintf("big/sub-%d", k):     "a file beside the directory\n",
		})
		putAll(t, d, add)
		if h, err = d.Seal(fmt.Sprintf("version %d\n", k), when(k)); err != nil {
			t.Fatal(err)
		}
		commits = append(commits, h)
		added = append(added, add)
		want = merged(want, add)
	}
	if err := d.Publish(branchOf(t, r)); err != nil {
		t.Fatal(err)
	}
	assertFsck(t, dir)
	assertTree(t, dir, "main", want)
	packs := globPacks(t, dir, "idx")
	if len(packs) != 1 {
		t.Fatalf("%d packs, want 1", len(packs))
	}
	if out := runGit(t, dir, "verify-pack", "-v", packs[0]); !strings.Contains(out, "chain length = 4") {
		t.Errorf("git verify-pack -v shows no chain of 4 deltas:\n%s", out)
	}
	for i, c := range commits {
		files, err := r.AddedFiles(c)
		if err != nil || len(files) != len(added[i]) {
			t.Errorf("go-git reads version %d: %d files added, want %d, %v", i, len(files), len(added[i]), err)
		}
	}

	// A later draft reads the last version back from the pack and goes on from it.
	_, h = commitFiles(t, r, map[string]string{"big/later.md": "later\n"}, "later\n")
	assertFsck(t, dir)
	assertTree(t, dir, h.String(), merged(want, map[string]string{"big/later.md": "later\n"}))
}

// Merging copies each pack's entries as they are. An object in two packs is copied
// once, and a delta whose base was the copy left out points at the copy kept.
func TestMergeKeepsDeltasWhoseBaseIsInTwoPacks(t *testing.T) {
	r, dir := newRepo(t)
	// Two drafts make the same first commit; the second goes on with a delta against
	// its own copy of the big directory, and is written but not published, as by a
	// flush that found the branch moved.
	shared := numbered("f", 200)
	kept, err := r.NewDraft(plumbing.ZeroHash)
	if err != nil {
		t.Fatal(err)
	}
	putAll(t, kept, merged(shared, numbered("only-in-the-first-", 100)))
	if _, err := kept.Commit(branchOf(t, r), "kept\n", when(0)); err != nil {
		t.Fatal(err)
	}
	lost, err := r.NewDraft(plumbing.ZeroHash)
	if err != nil {
		t.Fatal(err)
	}
	putAll(t, lost, shared)
	if _, err := lost.Seal("lost\n", when(0)); err != nil {
		t.Fatal(err)
	}
	putAll(t, lost, numbered("g", 5))
	last, err := lost.Seal("lost, second\n", when(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.writePack(lost.staged.order, lost.staged.object); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < maxPacks; i++ {
		commitFiles(t, r, map[string]string{fmt.Sprintf("small/%02d", i): "s"}, fmt.Sprintf("c%d\n", i))
	}
	if err := r.MergePacks(); err != nil {
		t.Fatal(err)
	}
	if packs := globPacks(t, dir, "pack"); len(packs) != 1 {
		t.Fatalf("%d packs after merging, want all in one", len(packs))
	}
	assertFsck(t, dir)
	for _, idx := range globPacks(t, dir, "idx") {
		runGit(t, dir, "verify-pack", idx)
	}
	if got := len(nonEmptyLines(runGit(t, dir, "ls-tree", "-r", "--name-only", last.String()))); got != 205 {
		t.Errorf("git lists %d files in the unpublished commit, want 205", got)
	}
	if files, err := r.AddedFiles(last); err != nil || len(files) != 5 {
		t.Errorf("go-git reads the unpublished commit: %d files added, %v; want 5", len(files), err)
	}
}

// The temporary files of a pack being written, left by a killed agmem, go at the next
// merge; git's own stay.
func TestMergePacksRemovesWhatKilledWritersLeft(t *testing.T) {
	r, dir := newRepo(t)
	commitFiles(t, r, map[string]string{"a": "a"}, "one\n")
	packDir := filepath.Join(dir, ".git", "objects", "pack")
	for _, name := range []string{tempPrefix + "pack_1", tempPrefix + "idx_2", "tmp_pack_git"} {
		if err := os.WriteFile(filepath.Join(packDir, name), []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.MergePacks(); err != nil {
		t.Fatal(err)
	}
	left, err := filepath.Glob(filepath.Join(packDir, "tmp_*"))
	if err != nil || len(left) != 1 || filepath.Base(left[0]) != "tmp_pack_git" {
		t.Errorf("left after merging: %q, %v; want only git's tmp_pack_git", left, err)
	}
}

// Packs git set apart (.keep, a cruft pack's .mtimes) are left as they are by a merge,
// and a merged pack's .rev and .bitmap go with it: git finds nothing left over.
func TestMergePacksLeavesWhatGitSetApart(t *testing.T) {
	r, dir := newRepo(t)
	packDir := filepath.Join(dir, ".git", "objects", "pack")
	var last plumbing.Hash
	for i := 0; i <= maxPacks+1; i++ {
		_, last = commitFiles(t, r, map[string]string{fmt.Sprintf("f%02d", i): fmt.Sprint(i)}, fmt.Sprintf("c%d\n", i))
	}
	packs, err := filepath.Glob(filepath.Join(packDir, "pack-*.pack"))
	if err != nil || len(packs) < 3 {
		t.Fatalf("packs %v, %v", packs, err)
	}
	kept := strings.TrimSuffix(packs[0], ".pack")
	mustWrite := func(path string) {
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(kept + ".keep")
	runGit(t, dir, "-c", "pack.writeReverseIndex=true", "index-pack", "--rev-index", packs[1])
	merged := strings.TrimSuffix(packs[1], ".pack")
	if _, err := os.Stat(merged + ".rev"); err != nil {
		t.Fatalf("git wrote no .rev: %v", err)
	}
	if err := r.MergePacks(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(kept + ".pack"); err != nil {
		t.Errorf("the pack with a .keep was merged away: %v", err)
	}
	if _, err := os.Stat(merged + ".pack"); err == nil {
		t.Fatalf("%s was not merged", merged)
	}
	if _, err := os.Stat(merged + ".rev"); err == nil {
		t.Errorf("the merged pack's .rev was left behind")
	}
	if got := len(nonEmptyLines(runGit(t, dir, "ls-tree", "-r", "--name-only", last.String()))); got != maxPacks+2 {
		t.Errorf("the last tree lists %d files, want %d", got, maxPacks+2)
	}
	assertFsck(t, dir)
}
