package vcs

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestPathChangesAsGitSays: commits made with the git CLI that add, change and delete
// files, deep and shallow, make a directory of a file and a file of a directory, change
// a file's mode, and name files in every order git sorts: PathChanges says of each what
// `git diff --name-status` says, and gives each path's blob as `git rev-parse` does.
func TestPathChangesAsGitSays(t *testing.T) {
	r, dir := newRepo(t)
	rnd := rand.New(rand.NewPCG(7, 8))
	names := []string{"a", "a.b", "a-b", "a0", "b", "day/x.md", "day/y.md", "day/z/deep.md", "a/inner", "b/c/d", "sessions/0f/s1/r.jsonl"}
	write := func(path, text string) {
		full := filepath.Join(dir, path)
		os.RemoveAll(full) // a directory where a file goes
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			// a file where a directory goes: it goes
			for d := filepath.Dir(full); d != dir; d = filepath.Dir(d) {
				if fi, err := os.Stat(d); err == nil && !fi.IsDir() {
					os.Remove(d)
				}
			}
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for n := range 30 {
		for range 1 + rnd.IntN(4) {
			path := names[rnd.IntN(len(names))]
			switch rnd.IntN(4) {
			case 0:
				os.RemoveAll(filepath.Join(dir, path))
			case 1:
				if fi, err := os.Stat(filepath.Join(dir, path)); err == nil && !fi.IsDir() {
					os.Chmod(filepath.Join(dir, path), fi.Mode()^0o111)
					continue
				}
				fallthrough
			default:
				write(path, fmt.Sprintf("%s, version %d\n", path, n))
			}
		}
		runGit(t, dir, "add", "-A", ".")
		runGit(t, dir, "commit", "-q", "--allow-empty", "-m", fmt.Sprint("commit ", n))
		head := revParse(t, dir, "HEAD")
		c, err := r.Commit(head)
		if err != nil {
			t.Fatal(err)
		}
		changes, err := r.PathChanges(c)
		if err != nil {
			t.Fatal(err)
		}
		from := "4b825dc642cb6eb9a060e54bf8d69288fbee4904" // the empty tree
		if n > 0 {
			from = "HEAD~"
		}
		var got []string
		for _, ch := range changes {
			got = append(got, map[string]string{"add": "A", "change": "M", "delete": "D"}[ch.Action]+"\t"+ch.Path)
			rev := "HEAD:" + ch.Path
			if ch.Action == "delete" {
				rev = "HEAD~:" + ch.Path
			}
			if want := strings.TrimSpace(runGit(t, dir, "rev-parse", rev)); ch.Blob.String() != want {
				t.Errorf("commit %d: %s %s: blob %s, git says %s", n, ch.Action, ch.Path, ch.Blob, want)
			}
		}
		want := nameStatus(t, dir, from, "HEAD")
		for i, l := range want {
			want[i] = strings.Replace(l, "T\t", "M\t", 1) // a mode's change is a change
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("commit %d: PathChanges\n%q\ngit diff --name-status\n%q", n, got, want)
		}
	}
}

// TestPathChangesReadModesAsGitDoes: trees another tool wrote with odd modes ("40755"
// and "040000" for a directory, "100664" for a file of 0644; git takes them, fsck only
// warns) are read as git reads them: a file changed under a directory whose mode was
// made odd is a change of that file, and a mode written otherwise is no change, to
// PathChanges (audit) and AddedPaths (the index) alike.
func TestPathChangesReadModesAsGitDoes(t *testing.T) {
	r, dir := newRepo(t)
	object := func(kind string, data []byte) string {
		return strings.TrimSpace(runGitStdin(t, dir, string(data), "hash-object", "-t", kind, "--literally", "-w", "--stdin"))
	}
	tree := func(entries ...string) string { // mode, name, hash, ...
		var b []byte
		for i := 0; i < len(entries); i += 3 {
			h, _ := hex.DecodeString(entries[i+2])
			b = append(append(append(b, entries[i]+" "+entries[i+1]...), 0), h...)
		}
		return object("tree", b)
	}
	one, two, other := object("blob", []byte("agmem wrote this\n")), object("blob", []byte("INJECTED\n")), object("blob", []byte("b\n"))
	trees := []string{
		tree("100644", "b", other, "40000", "current", tree("100644", "f.md", one)),
		tree("100664", "b", other, "40755", "current", tree("100644", "f.md", two)),
		tree("100644", "b", other, "040000", "current", tree("100644", "f.md", two)),
		tree("100755", "b", other, "40000", "current", tree("100644", "f.md", two)),
	}
	parent := ""
	for n, tr := range trees {
		args := []string{"commit-tree", tr, "-m", fmt.Sprint("commit ", n)}
		if parent != "" {
			args = append(args, "-p", parent)
		}
		commit := strings.TrimSpace(runGit(t, dir, args...))
		c, err := r.Commit(plumbing.NewHash(commit))
		if err != nil {
			t.Fatal(err)
		}
		changes, err := r.PathChanges(c)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ch := range changes {
			got = append(got, map[string]string{"add": "A", "change": "M", "delete": "D"}[ch.Action]+"\t"+ch.Path)
		}
		from := "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
		if parent != "" {
			from = parent
		}
		want := nameStatus(t, dir, from, commit)
		if !slices.Equal(got, want) {
			t.Errorf("commit %d: PathChanges %q, git diff --name-status %q", n, got, want)
		}
		// What the index and Materialize read of a commit, its files added or changed.
		added, err := r.AddedPaths(c.Hash, func(string) bool { return false })
		if err != nil {
			t.Fatal(err)
		}
		var paths, wantPaths []string
		for _, a := range added {
			paths = append(paths, a.Path)
		}
		for _, l := range want {
			if !strings.HasPrefix(l, "D\t") {
				wantPaths = append(wantPaths, l[2:])
			}
		}
		if slices.Sort(paths); !slices.Equal(paths, wantPaths) {
			t.Errorf("commit %d: AddedPaths %q, want %q", n, paths, wantPaths)
		}
		parent = commit
	}
}

// FilesIn lists what git ls-tree lists of a directory's files and links, ListDir of its
// directories, and neither anything for a directory the tree lacks or a path that is a
// file.
func TestDirListingsAsGitLists(t *testing.T) {
	r, dir := newRepo(t)
	_, h := commitFiles(t, r, map[string]string{"sessions/ab/s1/b1.jsonl": "{}\n", "sessions/ab/s1/b1.part2.jsonl": "{}\n",
		"sessions/ab/s1/deeper/x": "x", "sessions/ab/s10/b.jsonl": "{}\n", "sessions/ab/s1.md": "m"}, "m\n")
	got, err := r.FilesIn(h, "sessions/ab/s1")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range got {
		paths = append(paths, f.Path+" "+f.Blob.String())
	}
	var want []string
	for _, line := range nonEmptyLines(runGit(t, dir, "ls-tree", h.String(), "sessions/ab/s1/")) {
		meta, path, _ := strings.Cut(line, "\t")
		if f := strings.Fields(meta); f[1] == "blob" {
			want = append(want, path+" "+f[2])
		}
	}
	if !equalStrings(paths, want) {
		t.Errorf("FilesIn: %q, git ls-tree: %q", paths, want)
	}
	var wantDirs []string
	for _, line := range nonEmptyLines(runGit(t, dir, "ls-tree", "-d", "--name-only", h.String(), "sessions/ab/")) {
		wantDirs = append(wantDirs, strings.TrimPrefix(line, "sessions/ab/"))
	}
	if dirs, err := r.ListDir(h, "sessions/ab"); err != nil || !equalStrings(dirs, wantDirs) {
		t.Errorf("ListDir: %q, %v; git ls-tree -d: %q", dirs, err, wantDirs)
	}
	for _, missing := range []string{"sessions/ab/none", "sessions/ab/s1.md", "nothing/at/all"} {
		if got, err := r.FilesIn(h, missing); got != nil || err != nil {
			t.Errorf("FilesIn(%q) = %v, %v; want nothing", missing, got, err)
		}
		if got, err := r.ListDir(h, missing); got != nil || err != nil {
			t.Errorf("ListDir(%q) = %v, %v; want nothing", missing, got, err)
		}
	}
}
