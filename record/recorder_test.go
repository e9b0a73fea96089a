package record

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agmem/agmem/capture"
)

// A directory's opt-out file is looked for once per record call, however many lines
// name the directory.
func TestOptOutsLooksOncePerDirectory(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	optOut := filepath.Join(dir, capture.OptOutFile)
	if err := os.WriteFile(optOut, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var seen optOuts
	if got := seen.of(sub); got != dir {
		t.Fatalf("of(%s) = %q, want %q", sub, got, dir)
	}
	os.Remove(optOut)
	if got := seen.of(sub); got != dir {
		t.Errorf("of(%s) looked again: %q", sub, got)
	}
	if got := seen.of(""); got != "" {
		t.Errorf(`of("") = %q`, got)
	}
}
