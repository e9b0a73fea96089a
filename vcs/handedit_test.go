package vcs

import (
	"os"
	"path/filepath"
	"testing"
)

// A flush that died before it finished materialises its commit again: a file a killed
// Materialize left half written is written whole, and one a person edited in between
// is left as they made it.
func TestMaterializeAgainKeepsAHandEdit(t *testing.T) {
	r, dir := newRepo(t)
	files := map[string]string{"current/semantic/a.md": "a, as committed\n", "current/semantic/b.md": "b, as committed\n"}
	d, _ := commitFiles(t, r, files, "one\n")
	a := filepath.Join(dir, "current", "semantic", "a.md")
	if err := os.MkdirAll(filepath.Dir(a), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(a, []byte("a, as c"), 0o644); err != nil { // cut short, not in the index yet
		t.Fatal(err)
	}
	if err := r.Materialize(d.Changes()); err != nil {
		t.Fatal(err)
	}
	assertClean(t, dir)

	edited := "a, as committed\nand a line of my own\n"
	if err := os.WriteFile(a, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.Materialize(d.Changes()); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(a); err != nil || string(got) != edited {
		t.Errorf("a.md = %q, %v; want the edit kept", got, err)
	}
	if got := runGit(t, dir, "status", "--porcelain"); got != " M current/semantic/a.md\n" {
		t.Errorf("git status --porcelain:\n%s\nwant a.md modified, nothing else", got)
	}
	assertIndexHolds(t, dir, files)
}
