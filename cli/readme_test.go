package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agmem/agmem/internal/shell"
)

// TestReadmeWorkedExample runs the README's worked example of reading memory back on
// the corpus it was made from, and holds each command to the output the README shows:
// a user who runs it gets what they read. Only the commit differs, made when the test
// flushes.
func TestReadmeWorkedExample(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	const first, last = "$ agmem search \"state lock\"", "$ git show "
	example := string(readme)
	start, end := strings.Index(example, first), strings.Index(example, last)
	if start < 0 || end < start {
		t.Fatalf("the README has no worked example from %q to %q", first, last)
	}
	example = example[start:end]

	corpus, err := os.ReadFile(filepath.Join("..", "recall", "testdata", "retrieval", "corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	repo := filepath.Join(dir, "memory")
	mustAgmem(t, dir, "", "init", repo)
	mustAgmem(t, repo, string(corpus), "record", "--jsonl")
	mustAgmem(t, repo, "", "flush")

	commit := regexp.MustCompile(`(?m)^commit:   [0-9a-f]{40}$`)
	steps := strings.Split(example, "$ agmem ")[1:]
	if len(steps) < 2 {
		t.Fatalf("the worked example has %d agmem commands, want a search and a show", len(steps))
	}
	for _, step := range steps {
		command, want, _ := strings.Cut(step, "\n")
		args, ok := shell.Words(command)
		if !ok {
			t.Fatalf("the README's command %q does not parse", command)
		}
		got := mustAgmem(t, repo, "", args...)
		want = strings.TrimSuffix(want, "\n")
		if commit.ReplaceAllString(got, "commit: C") != commit.ReplaceAllString(want, "commit: C") {
			t.Errorf("agmem %s:\n%s\nthe README shows:\n%s", command, got, want)
		}
	}
}
