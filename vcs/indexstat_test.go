package vcs

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The index knows a file unchanged without reading it where git status would: its
// blob and stat data recorded, and no change possible within the index's last second.
// An edit of the same size, a file changed within that second, or one the index does
// not record as that blob, is read.
func TestIndexStatHoldsWhatGitStatusWouldNotRead(t *testing.T) {
	r, dir := newRepo(t)
	d, _ := commitFiles(t, r, map[string]string{"current/a.md": "alpha\n", "current/b.md": "bravo\n"}, "m\n")
	if err := r.Materialize(d.Changes()); err != nil {
		t.Fatal(err)
	}
	blob := map[string]Change{}
	for _, c := range d.Changes() {
		blob[c.Path] = c
	}
	holds := func(path string) bool {
		t.Helper()
		s, err := r.ReadIndexStat()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		fi, err := os.Lstat(filepath.Join(dir, path))
		if err != nil {
			t.Fatal(err)
		}
		return s.Holds(path, fi, blob[path].Hash)
	}
	// Written in the index's second: racily clean, read.
	setIndexTime(t, dir, time.Now())
	if holds("current/a.md") {
		t.Errorf("a file written in the index's last second is taken as unchanged")
	}
	later := time.Now().Add(5 * time.Second)
	setIndexTime(t, dir, later)
	if !holds("current/a.md") {
		t.Errorf("a file the index records, written before it, is read: the check saves nothing")
	}
	// Edited since, its size kept: its ctime moved.
	if err := os.WriteFile(filepath.Join(dir, "current/b.md"), []byte("BRAVO\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	setIndexTime(t, dir, later)
	if holds("current/b.md") {
		t.Errorf("an edit of the same size is taken as unchanged")
	}
	// Not the blob asked about.
	blob["current/a.md"] = blob["current/b.md"]
	if holds("current/a.md") {
		t.Errorf("a file the index records as another blob is taken as that blob")
	}
}

func setIndexTime(t *testing.T, dir string, at time.Time) {
	t.Helper()
	if err := os.Chtimes(filepath.Join(dir, ".git", "index"), at, at); err != nil {
		t.Fatal(err)
	}
}
