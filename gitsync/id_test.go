package gitsync

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestEnsureIDIsMadeOnceAndKept(t *testing.T) {
	dir := t.TempDir()
	if id, err := readID(dir); id != "" || err != nil {
		t.Fatalf("readID of a repo with none = %q, %v", id, err)
	}
	ids := make([]string, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			id, err := EnsureID(dir, "/home/ana/Agent Memory")
			if err != nil {
				t.Error(err)
			}
			ids[i] = id
		})
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("processes making the id at once got %q", ids)
		}
	}
	if !validID(ids[0]) || !strings.Contains(ids[0], "-agent-memory-") {
		t.Errorf("id %q", ids[0])
	}
	if again, _ := EnsureID(dir, "/elsewhere"); again != ids[0] {
		t.Errorf("the id changed from %q to %q", ids[0], again)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

func TestReadIDRefusesWhatCannotNameABranch(t *testing.T) {
	for _, id := range []string{"-x", "a..b", "x.lock", "x.", "a/b", "a b", ".x", strings.Repeat("a", 101)} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, IDFile), []byte(id+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readID(dir); err == nil {
			t.Errorf("readID accepted %q", id)
		}
	}
	for _, id := range []string{"ana-laptop", "ci_runner.7", "A1"} {
		if !validID(id) {
			t.Errorf("validID(%q) = false", id)
		}
	}
}

func TestIDPart(t *testing.T) {
	for in, want := range map[string]string{
		"Ana's MacBook Pro.local": "ana-s-macbook-pro-local",
		"--x__y--":                "x-y",
		"ünïcode":                 "n-code",
		"":                        "",
		strings.Repeat("ab", 20):  strings.Repeat("ab", 12),
	} {
		if got := idPart(in); got != want {
			t.Errorf("idPart(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://ana:s3cret@git.example.com/m.git": "https://ana:xxxxx@git.example.com/m.git",
		"https://git.example.com/m.git":            "https://git.example.com/m.git",
		"/srv/memory.git":                          "/srv/memory.git",
		"git@github.com:ana/memory.git":            "git@github.com:ana/memory.git",
		"https://ana:s3cr%zzET@127.0.0.1:1/x.git":  "https://ana:xxxxx@127.0.0.1:1/x.git",
		"https://ana:a/b#c@host/x.git":             "https://ana:xxxxx@host/x.git",
	} {
		if got := redactURL(in); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
	}
}
