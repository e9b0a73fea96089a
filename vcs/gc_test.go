package vcs

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/agmem/agmem/internal/hint"
)

func TestPackObjects(t *testing.T) {
	for _, by := range []string{"git gc", "agmem"} {
		t.Run(by, func(t *testing.T) {
			r, dir := newRepo(t)
			for i := range 20 {
				commitFiles(t, r, map[string]string{"current/a.md": strings.Repeat("agmem ", 100+i)}, "agmem commit")
			}
			writeWorktree(t, dir, map[string]string{"notes.md": "by hand"})
			runGit(t, dir, "add", "notes.md")
			runGit(t, dir, "commit", "-q", "-m", "a person's commit") // loose objects
			tip := revParse(t, dir, "HEAD")

			path := os.Getenv("PATH")
			if by == "agmem" {
				os.Setenv("PATH", t.TempDir()) // no git
			}
			p, err := r.PackObjects()
			os.Setenv("PATH", path)
			if err != nil {
				t.Fatal(err)
			}
			if p.By != by || p.After <= 0 || p.After >= p.Before {
				t.Errorf("PackObjects = %+v, want %s to shrink the objects", p, by)
			}
			if count := runGit(t, dir, "count-objects", "-v"); !strings.Contains(count, "\ncount: 0\n") && !strings.HasPrefix(count, "count: 0\n") {
				t.Errorf("loose objects are left:\n%s", count)
			}
			assertFsck(t, dir)
			if got := revParse(t, dir, "HEAD"); got != tip {
				t.Errorf("HEAD moved from %s to %s", tip, got)
			}
			if log := runGit(t, dir, "log", "--oneline"); len(nonEmptyLines(log)) != 21 {
				t.Errorf("git log after packing:\n%s", log)
			}
		})
	}
}

// TestPackObjectsOfAnotherUsersRepo: git's CLI refuses a repository another user owns
// (go-git, which flushes, does not ask): the error says how to let it.
func TestPackObjectsOfAnotherUsersRepo(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("gives the repo to another user: needs root")
	}
	t.Setenv("HOME", t.TempDir()) // no safe.directory of the machine's
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	r, dir := newRepo(t)
	commitFiles(t, r, map[string]string{"current/a.md": "agmem"}, "agmem commit")
	if out, err := exec.Command("chown", "-R", "65534:65534", dir).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v: %s", err, out)
	}
	_, err := r.PackObjects()
	if err == nil || !strings.Contains(hint.For(err), "git config --global --add safe.directory "+dir) {
		t.Errorf("PackObjects of another user's repo: %v, hint %q", err, hint.For(err))
	}
}
