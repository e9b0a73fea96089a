package vcs

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/object"
)

// OpenFile reads a file as git has it however git stores it: whole in a pack (as agmem
// writes it), loose (as git commit writes it), as a delta in a pack (after git gc).
func TestOpenFileAgreesWithGit(t *testing.T) {
	r, dir := newRepo(t)
	big := strings.Repeat("a line of a session record, long enough to be worth a delta\n", 20000)
	files := map[string]string{
		"sessions/s1/b1.jsonl": big,
		"sessions/s1/b2.jsonl": big + "one line more\n",
		"sessions/s1/empty":    "",
	}
	d, _ := commitFiles(t, r, files, "m\n")
	if err := r.Materialize(d.Changes()); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		h := revParse(t, dir, "HEAD")
		for path, want := range files {
			rd, err := r.OpenFile(h, path)
			if err != nil {
				t.Fatalf("%s: OpenFile(%s): %v", when, path, err)
			}
			got, err := io.ReadAll(rd)
			rd.Close()
			if err != nil || string(got) != want {
				t.Errorf("%s: OpenFile(%s) read %d bytes, %v; want %d", when, path, len(got), err, len(want))
			}
		}
		for _, missing := range []string{"sessions/s1/nope", "nope/b1.jsonl", "sessions/s1"} {
			if _, err := r.OpenFile(h, missing); !errors.Is(err, object.ErrFileNotFound) {
				t.Errorf("%s: OpenFile(%s) = %v, want ErrFileNotFound", when, missing, err)
			}
		}
	}
	check("packed by agmem")

	files["sessions/s1/loose"] = "written by git\n"
	writeWorktree(t, dir, map[string]string{"sessions/s1/loose": files["sessions/s1/loose"]})
	runGit(t, dir, "add", "sessions/s1/loose")
	runGit(t, dir, "commit", "-q", "-m", "by git")
	check("a loose object")

	if _, err := r.PackObjects(); err != nil {
		t.Fatal(err)
	}
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	if len(packs) != 1 {
		t.Fatalf("after git gc: %d packs", len(packs))
	}
	if out := runGit(t, dir, "verify-pack", "-v", packs[0]); !strings.Contains(out, "chain length = 1") {
		t.Fatalf("git gc stored no delta:\n%s", out)
	}
	check("after git gc, deltas")
	h := revParse(t, dir, "HEAD")
	os.Remove(packs[0]) // the index read says it is there
	if rd, err := r.OpenFile(h, "sessions/s1/b1.jsonl"); err == nil {
		rd.Close()
		t.Errorf("OpenFile of a blob whose pack is gone: no error")
	}
}
