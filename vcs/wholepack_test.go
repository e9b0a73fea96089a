package vcs

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/storage/memory"
)

// A whole pack holds exactly what the tip reaches, each object once, as git and go-git
// read it: agmem's packs copied with their deltas, a pack git repacked, loose objects;
// and never an object the history no longer reaches, even where a reachable blob was
// stored as a delta against it (written whole).
func TestWholePackSendsWhatTheTipReaches(t *testing.T) {
	r, dir := newRepo(t)
	commitFiles(t, r, numbered("f", 200), "first\n")
	commitFiles(t, r, numbered("g", 20), "second\n")
	commitFiles(t, r, map[string]string{"big/f000.md": "changed\n"}, "third\n")
	base := revParse(t, dir, "main")

	// A file with a secret, then the same file without it and shorter: git stores the
	// second as a delta against the first. Then the history is rewritten without the
	// first (as after a purge), which stays in the pack.
	var long strings.Builder
	for i := range 200 {
		fmt.Fprintf(&long, "line %d of a long file that is kept\n", i)
	}
	secret := long.String() + "token SECRET-0123456789abcdef\n"
	kept := strings.Join(strings.SplitAfter(long.String(), "\n")[:180], "")
	commitFiles(t, r, map[string]string{"notes/n.md": secret}, "with the secret\n")
	commitFiles(t, r, map[string]string{"notes/n.md": kept}, "without it\n")
	runGit(t, dir, "repack", "-a", "-d", "-f", "-q", "--window=50", "--depth=50")
	secretID := strings.TrimSpace(runGitStdin(t, dir, secret, "hash-object", "--stdin"))
	keptID := strings.TrimSpace(runGitStdin(t, dir, kept, "hash-object", "--stdin"))
	if base := deltaBase(t, dir, keptID); base != secretID {
		t.Fatalf("git stored the blob kept against %q, not the secret's blob: the test makes nothing to mend", base)
	}
	rewritten := strings.TrimSpace(runGit(t, dir, "commit-tree", "main^{tree}", "-p", base.String(), "-m", "rewritten"))
	// And one commit of loose objects on top.
	loose := strings.TrimSpace(runGitStdin(t, dir, "a loose blob\n", "hash-object", "-w", "--stdin"))
	tree := strings.TrimSpace(runGitStdin(t, dir, runGit(t, dir, "ls-tree", rewritten)+"100644 blob "+loose+"\tloose.md\n", "mktree"))
	tip := strings.TrimSpace(runGit(t, dir, "commit-tree", tree, "-p", rewritten, "-m", "loose"))
	runGit(t, dir, "update-ref", "refs/heads/main", tip)
	// And one of agmem's on top, in a pack of its own.
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, last := commitFiles(t, r, map[string]string{"big/f001.md": "changed too\n"}, "fourth\n")
	var pack bytes.Buffer
	planned, err := r.PlanWholePack(last, nil)
	if err == nil {
		_, err = planned.WriteTo(&pack)
	}
	if err != nil {
		t.Fatal(err)
	}

	remote := t.TempDir()
	runGit(t, remote, "init", "-q", "--bare", "-b", "main")
	runGitStdin(t, remote, pack.String(), "index-pack", "--strict", "--stdin")
	runGit(t, remote, "update-ref", "refs/heads/main", last.String())
	assertFsck(t, remote)
	want := reached(t, dir)
	if got := reached(t, remote); !slices.Equal(got, want) {
		t.Fatalf("the remote reaches %d objects, the repo %d", len(got), len(want))
	}
	if got := countLine(t, remote, "in-pack"); got != fmt.Sprint(len(want)) {
		t.Errorf("the pack holds %s objects, the tip reaches %d", got, len(want))
	}
	if _, _, err := execGit(remote, "", "cat-file", "-e", secretID); err == nil {
		t.Errorf("the blob the history no longer reaches was sent")
	}
	if out := runGit(t, remote, "verify-pack", "-v", onePack(t, filepath.Join(remote, "objects"))); !strings.Contains(out, "chain length = 1") {
		t.Errorf("the pack sent holds no deltas:\n%s", out)
	}

	// go-git's reading of a pack, which its own receive-pack runs.
	st := memory.NewStorage()
	if err := packfile.UpdateObjectStorage(st, bytes.NewReader(pack.Bytes())); err != nil {
		t.Fatalf("go-git reads the pack: %v", err)
	}
	o, err := st.EncodedObject(plumbing.BlobObject, plumbing.NewHash(keptID))
	if err != nil {
		t.Fatal(err)
	}
	rd, _ := o.Reader()
	var got bytes.Buffer
	got.ReadFrom(rd)
	if got.String() != kept {
		t.Errorf("go-git reads the blob kept as %q", got.String())
	}
}

// deltaBase is the object git stored id against in the repo's pack, "" where it is whole.
func deltaBase(t *testing.T, dir, id string) string {
	t.Helper()
	for _, line := range nonEmptyLines(runGit(t, dir, "verify-pack", "-v", onePack(t, filepath.Join(dir, ".git", "objects")))) {
		if f := strings.Fields(line); len(f) == 7 && f[0] == id {
			return f[6]
		}
	}
	return ""
}

// reached is every object the repo's main reaches, sorted.
func reached(t *testing.T, dir string) []string {
	t.Helper()
	var ids []string
	for _, line := range nonEmptyLines(runGit(t, dir, "rev-list", "--objects", "main")) {
		ids = append(ids, strings.Fields(line)[0])
	}
	slices.Sort(ids)
	return ids
}

// countLine is what `git count-objects -v` says for key.
func countLine(t *testing.T, dir, key string) string {
	t.Helper()
	for _, line := range nonEmptyLines(runGit(t, dir, "count-objects", "-v")) {
		if k, v, _ := strings.Cut(line, ": "); k == key {
			return v
		}
	}
	return ""
}

// onePack is the index of the one pack under objects; the test fails unless there is one.
func onePack(t *testing.T, objects string) string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(objects, "pack", "pack-*.idx"))
	if err != nil || len(names) != 1 {
		t.Fatalf("%d pack indexes in %s, want 1 (%v)", len(names), objects, err)
	}
	return names[0]
}
