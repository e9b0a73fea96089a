package vcs

import (
	"os"
	"strings"
	"testing"
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
