package vcs

// Helpers shared by the tests of this package. Every test checks what go-git wrote with
// the real git CLI, run with a private HOME, no system config and a fixed identity, so
// that nothing on the machine running the tests changes what git says.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// The identity of the person whose commits the tests make with the git CLI.
const (
	humanName  = "Ana Human"
	humanEmail = "ana@example.com"
)

func TestMain(m *testing.M) {
	if _, err := exec.LookPath("git"); err != nil {
		fmt.Fprintln(os.Stderr, "vcs tests check their results with the git CLI: install git")
		os.Exit(1)
	}
	home, err := os.MkdirTemp("", "vcs-test-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Neither this process (go-git reads the global config for the commit identity)
	// nor the git commands it runs may see the user's configuration or a GIT_DIR,
	// GIT_INDEX_FILE, GIT_AUTHOR_NAME... inherited from whatever started the tests.
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "GIT_") {
			os.Unsetenv(k)
		}
	}
	os.Unsetenv("XDG_CONFIG_HOME")
	os.Setenv("HOME", home)
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// gitEnv is the environment of every git command a test runs.
func gitEnv() []string {
	return append(os.Environ(),
		"HOME="+os.Getenv("HOME"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME="+humanName,
		"GIT_AUTHOR_EMAIL="+humanEmail,
		"GIT_COMMITTER_NAME="+humanName,
		"GIT_COMMITTER_EMAIL="+humanEmail,
		"GIT_TERMINAL_PROMPT=0",
		"LC_ALL=C",
	)
}

// execGit runs git in dir with stdin and returns what it printed.
func execGit(dir, stdin string, args ...string) (stdout, stderr string, err error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// runGit runs git in dir and returns its stdout; the test fails if git fails.
func runGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return runGitStdin(t, dir, "", args...)
}

func runGitStdin(t testing.TB, dir, stdin string, args ...string) string {
	t.Helper()
	out, errOut, err := execGit(dir, stdin, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, errOut)
	}
	return out
}

// revParse is the commit a revision names, as git reads it.
func revParse(t testing.TB, dir, rev string) plumbing.Hash {
	t.Helper()
	return plumbing.NewHash(strings.TrimSpace(runGit(t, dir, "rev-parse", "--verify", "-q", rev+"^{commit}")))
}

// assertFsck fails the test unless `git fsck --strict` finds nothing at all.
func assertFsck(t testing.TB, dir string) {
	t.Helper()
	out, errOut, err := execGit(dir, "", "fsck", "--strict", "--no-dangling", "--no-progress")
	if err != nil || strings.TrimSpace(out+errOut) != "" {
		t.Fatalf("git fsck --strict: %v\n%s%s", err, out, errOut)
	}
}

// assertTree checks with git that rev's tree holds exactly files (path → content).
func assertTree(t testing.TB, dir, rev string, files map[string]string) {
	t.Helper()
	var got []string
	for _, p := range strings.Split(runGit(t, dir, "ls-tree", "-r", "-z", "--name-only", rev), "\x00") {
		if p != "" {
			got = append(got, p)
		}
	}
	want := sortedKeys(files)
	if !equalStrings(got, want) {
		t.Fatalf("git ls-tree -r %s:\n got %q\nwant %q", rev, got, want)
	}
	contents := catFiles(t, dir, rev, want)
	for _, p := range want {
		if contents[p] != files[p] {
			t.Errorf("git show %s:%s = %q, want %q", rev, p, contents[p], files[p])
		}
	}
}

// catFiles reads rev:path for each path with one `git cat-file --batch`.
func catFiles(t testing.TB, dir, rev string, paths []string) map[string]string {
	t.Helper()
	var in strings.Builder
	for _, p := range paths {
		in.WriteString(rev + ":" + p + "\n")
	}
	out := runGitStdin(t, dir, in.String(), "cat-file", "--batch")
	r := bufio.NewReader(strings.NewReader(out))
	got := make(map[string]string, len(paths))
	for _, p := range paths {
		header, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("git cat-file --batch: %v", err)
		}
		f := strings.Fields(header)
		if len(f) != 3 || f[1] != "blob" {
			t.Fatalf("git cat-file --batch %s:%s: %q", rev, p, header)
		}
		size, _ := strconv.Atoi(f[2])
		data := make([]byte, size+1) // the content and a newline
		if _, err := io.ReadFull(r, data); err != nil {
			t.Fatalf("git cat-file --batch: %v", err)
		}
		got[p] = string(data[:size])
	}
	return got
}

// nameStatus is `git diff --name-status from to`, one "X\tpath" per element, sorted.
func nameStatus(t testing.TB, dir, from, to string) []string {
	t.Helper()
	out := runGit(t, dir, "-c", "core.quotePath=false", "diff", "--no-renames", "--name-status", from, to)
	lines := nonEmptyLines(out)
	sort.Strings(lines)
	return lines
}

func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// newRepo makes a fresh memory repo's git side in a temporary directory.
func newRepo(t testing.TB) (*Git, string) {
	t.Helper()
	dir := t.TempDir()
	r, created, err := Init(dir)
	if err != nil || !created {
		t.Fatalf("Init(%s) = created %v, %v", dir, created, err)
	}
	return r, dir
}

// branchOf is the branch HEAD points at; the test fails if there is none.
func branchOf(t testing.TB, r *Git) plumbing.ReferenceName {
	t.Helper()
	b, err := r.Branch()
	if err != nil {
		t.Fatalf("Branch: %v", err)
	}
	return b
}

// when is the time of the n-th commit a test makes: fixed, so runs are reproducible.
func when(n int) time.Time {
	return time.Date(2026, 11, 30, 9, 0, n, 0, time.FixedZone("CET", 3600))
}

// commitFiles commits files on the branch's tip with a Draft and returns the draft and
// the new commit.
func commitFiles(t testing.TB, r *Git, files map[string]string, message string) (*Draft, plumbing.Hash) {
	t.Helper()
	branch := branchOf(t, r)
	tip, err := r.Tip(branch)
	if err != nil {
		t.Fatal(err)
	}
	d, err := r.NewDraft(tip)
	if err != nil {
		t.Fatalf("NewDraft(%s): %v", tip, err)
	}
	for _, p := range sortedKeys(files) {
		if err := d.Put(p, []byte(files[p])); err != nil {
			t.Fatalf("Put(%q): %v", p, err)
		}
	}
	h, err := d.Commit(branch, message, when(len(files)))
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	return d, h
}

// writeWorktree writes files into dir as a person would.
func writeWorktree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, data := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// merged is a copy of base with add written over it.
func merged(base, add map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(add))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range add {
		out[k] = v
	}
	return out
}

// Materialize locks the index and materialises changes (see IndexLock.Materialize).
func (r *Git) Materialize(changes []Change) error {
	l, err := r.LockIndex()
	if err != nil {
		return err
	}
	defer l.Release()
	return l.Materialize(changes)
}

// ReadDir reads the files directly inside dir in commit h.
func (r *Git) ReadDir(h plumbing.Hash, dir string) ([]File, error) {
	var out []File
	err := r.EachFile(h, dir, func(path string, rd io.Reader) error {
		data, err := io.ReadAll(rd)
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		out = append(out, File{Path: path, Data: data})
		return nil
	})
	return out, err
}
