package maintain

// Helpers shared by the tests of this package: real memory repos made by memrepo.Init,
// real journals, flushes through flush.Run, and hand changes made with the real git CLI,
// run with a private HOME and no system config.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agmem/agmem/flush"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/journal"
	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/vcs"
)

func TestMain(m *testing.M) {
	if _, err := exec.LookPath("git"); err != nil {
		fmt.Fprintln(os.Stderr, "maintain tests change memory repos with the git CLI: install git")
		os.Exit(1)
	}
	home, err := os.MkdirTemp("", "maintain-test-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "GIT_") || k == "AGMEM_FAILPOINT" {
			os.Unsetenv(k)
		}
	}
	os.Setenv("HOME", home)
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"} {
		os.Setenv(k, "Ana Test")
	}
	for _, k := range []string{"GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"} {
		os.Setenv(k, "ana@example.com")
	}
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// memRepo is a memory repo made by agmem init, with its journal and git side.
type memRepo struct {
	t   *testing.T
	dir string
	j   *journal.Journal
	git *vcs.Git
}

func newMemRepo(t *testing.T) *memRepo {
	t.Helper()
	r, _, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	git, err := vcs.Open(r.Root)
	if err != nil {
		t.Fatal(err)
	}
	return &memRepo{t: t, dir: r.Root, j: r.Journal(), git: git}
}

func (m *memRepo) stateDir() string { return memrepo.Repo{Root: m.dir}.StateDir() }

// record appends n observations of session to the journal and returns their ids.
func (m *memRepo) record(session string, n int) []string {
	m.t.Helper()
	var entries []memory.Entry
	for i := 0; i < n; i++ {
		at := time.Now().UTC()
		entries = append(entries, memory.Entry{Observation: &memory.Observation{
			ID: memory.NewID(at), SessionID: session, Timestamp: at, ToolName: "read_file",
			Arguments:  json.RawMessage(fmt.Sprintf(`{"path":"%d.md"}`, i)),
			Result:     json.RawMessage(`"a long paragraph about the blog layout and its parts"`),
			MemoryType: memory.Semantic, Summary: "read_file", Source: "test",
		}})
	}
	if _, err := m.j.Append(journal.Entries(entries), journal.AppendOptions{IdleGap: time.Hour, Now: time.Now()}); err != nil {
		m.t.Fatal(err)
	}
	ids := make([]string, n)
	for i, e := range entries {
		ids[i] = e.ID()
	}
	return ids
}

// flushed records n observations of session and flushes them; it returns their ids.
func (m *memRepo) flushed(session string, n int) []string {
	m.t.Helper()
	ids := m.record(session, n)
	m.flush()
	return ids
}

func (m *memRepo) flush() []flush.Commit {
	m.t.Helper()
	commits, err := flush.Run(m.stateDir(), m.j, m.git, flush.Options{})
	if err != nil {
		m.t.Fatal(err)
	}
	return commits
}

func (m *memRepo) check() *Report {
	m.t.Helper()
	r, err := Check(m.stateDir(), m.j, m.git)
	if err != nil {
		m.t.Fatal(err)
	}
	return r
}

func (m *memRepo) repair() (Repaired, *Report) {
	m.t.Helper()
	done, r, err := Repair(m.stateDir(), m.j, m.git, flush.Options{})
	if err != nil {
		m.t.Fatal(err)
	}
	return done, r
}

// gitCLI runs git in the repo and returns what it printed.
func (m *memRepo) gitCLI(args ...string) string {
	m.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = m.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		m.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// onlyProblem fails the test unless r found one problem, of kind k, saying text.
func onlyProblem(t *testing.T, r *Report, k Kind, text string) Problem {
	t.Helper()
	if len(r.Problems) != 1 || r.Problems[0].Kind != k || !strings.Contains(r.Problems[0].Message, text) {
		t.Fatalf("problems = %v, want one %s saying %q", r.Problems, k, text)
	}
	return r.Problems[0]
}

// kinds are the kinds of the problems found, in order.
func kinds(r *Report) []Kind {
	var out []Kind
	for _, p := range r.Problems {
		out = append(out, p.Kind)
	}
	return out
}
