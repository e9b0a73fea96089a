package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agmem/agmem/internal/testcmd"
)

// TestMain makes this test binary double as the agmem and agmem-record commands, put on
// PATH for the agents, whose hooks run them as agmem hooks install wrote.
func TestMain(m *testing.M) {
	testscript.Main(m, testcmd.Commands())
}

// agentTimeout bounds one run of an agent; a whole session takes seconds.
const agentTimeout = 120 * time.Second

// finalAnswer ends every script: the agent's output holds it when the session ran to its end.
const finalAnswer = "Done: listed, read, wrote, failed, was refused, used MCP. AGMEM-E2E-FINAL"

// seedMarker is in the memory repo before the agent starts, told of by agmem's context at
// the session's start and found by agmem's memory search during it.
const seedMarker = "agmem-e2e-seed-7f3c"

// skipOrFail skips a test the machine cannot run, saying why; under CI, where the machine
// is made for it, that is a failure.
func skipOrFail(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(why + " (CI=true: the end-to-end tests must run here)")
	}
	t.Skip(why)
}

// agentBinary is an agent's command as npm installed it in testdata/npm.
func agentBinary(t *testing.T, name string) string {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join("testdata", "npm", "node_modules", ".bin", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		skipOrFail(t, fmt.Sprintf("%s is not installed (%v): run scripts/test.sh, or npm ci in e2e/testdata/npm", name, err))
	}
	if _, err := exec.LookPath("node"); err != nil {
		skipOrFail(t, "node is not installed; scripts/test.sh installs it")
	}
	return bin
}

// world is one agent's scratch machine: a HOME, a project the agent works in, a memory
// repo, the raw hook's payloads, and the environment the agent and agmem run with.
type world struct {
	t       *testing.T
	dir     string
	home    string
	project string
	repo    string
	raw     string // the raw hook's payloads, NN-<event>.json: the oracle
	agmem   string // this test binary as agmem, on PATH
	fsMCP   string // the MCP filesystem server's script
	env     []string
}

// newWorld makes the scratch machine and a memory repo that already remembers one call in
// the project (seedMarker). With AGMEM_E2E_KEEP=DIR set, it is kept in DIR/<test>.
func newWorld(t *testing.T) *world {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("these tests check agmem's commits with the git CLI: install git")
	}
	dir := t.TempDir()
	if keep := os.Getenv("AGMEM_E2E_KEEP"); keep != "" {
		dir = filepath.Join(keep, t.Name())
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
	}
	w := &world{t: t, dir: dir, home: filepath.Join(dir, "home"), project: filepath.Join(dir, "shop"),
		repo: filepath.Join(dir, "memory"), raw: filepath.Join(dir, "raw")}
	for _, d := range []string{w.home, w.project, w.raw, filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i <= 6; i++ {
		w.write(filepath.Join(w.project, fmt.Sprintf("file-%d.txt", i)),
			fmt.Sprintf("file-%d.txt: one of the files the scripted model lists and reads, long enough to be captured.\n", i))
	}
	w.write(filepath.Join(w.project, "notes.txt"),
		"alpha\nbeta\ngamma: the notes file the scripted model asks the agent to read, long enough to be captured.\n")
	w.write(filepath.Join(dir, "raw-hook.sh"), rawHookScript)
	if err := os.Chmod(filepath.Join(dir, "raw-hook.sh"), 0o755); err != nil {
		t.Fatal(err)
	}

	var err error
	if w.agmem, err = exec.LookPath("agmem"); err != nil {
		t.Fatalf("agmem is not on PATH, where TestMain puts this test binary as agmem: %v", err)
	}
	if w.fsMCP, err = filepath.Abs(filepath.Join("..", "mcp", "testdata", "npm", "node_modules",
		"@modelcontextprotocol", "server-filesystem", "dist", "index.js")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(w.fsMCP); err != nil {
		skipOrFail(t, fmt.Sprintf("the MCP filesystem server is not installed (%v): run scripts/test.sh, or npm ci in mcp/testdata/npm", err))
	}
	node, _ := exec.LookPath("node")
	w.env = []string{
		"PATH=" + strings.Join([]string{filepath.Dir(w.agmem), filepath.Dir(node), "/usr/local/bin", "/usr/bin", "/bin"}, string(os.PathListSeparator)),
		"HOME=" + w.home,
		"CLAUDE_CONFIG_DIR=" + filepath.Join(w.home, ".claude"),
		"CODEX_HOME=" + filepath.Join(w.home, ".codex"),
		"TMPDIR=" + filepath.Join(dir, "tmp"),
		"LANG=C.UTF-8", "TERM=dumb", "NO_COLOR=1",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Ana Test", "GIT_AUTHOR_EMAIL=ana@example.com",
		"GIT_COMMITTER_NAME=Ana Test", "GIT_COMMITTER_EMAIL=ana@example.com",
		"AGMEM_REPO=" + w.repo,
		// Commit messages from the template: no model is asked for them.
		"AGMEM_LLM_ENABLED=false",
	}
	w.agmemOK("init", w.repo)
	w.agmemOK("record", "--tool", "Bash", "--arg", "command=make deploy TARGET="+seedMarker,
		"--result", "deployed "+seedMarker+" to staging: the release the agent's memory should tell of",
		"--cwd", w.project, "--session", "e2e-seed")
	w.agmemOK("flush")
	return w
}

func (w *world) write(path, content string) {
	w.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) read(path string) string {
	w.t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		w.t.Fatal(err)
	}
	return string(b)
}

// run runs a command of the scratch machine in the project, bounded in time.
func (w *world) run(name string, args ...string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = w.project
	cmd.Env = w.env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// agmemOK runs agmem and fails the test unless it succeeds.
func (w *world) agmemOK(args ...string) string {
	w.t.Helper()
	out, errOut, err := w.run(w.agmem, args...)
	if err != nil {
		w.t.Fatalf("agmem %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// rawHookScript keeps a hook's payload as the agent sent it, numbered in the order the
// hooks ran (flock: an agent may run hooks of several events at once).
const rawHookScript = `#!/bin/sh
# raw-hook.sh DIR EVENT: the payload on stdin, byte for byte, as DIR/NN-EVENT.json.
exec 9>>"$1/.lock"
flock 9
n=$(ls "$1" | grep -c '\.json$')
cat >"$1/$(printf %02d $((n + 1)))-$2.json"
`

// rawHook is the shell command of the raw hook for event.
func (w *world) rawHook(event string) string {
	return shellQuote(filepath.Join(w.dir, "raw-hook.sh")) + " " + shellQuote(w.raw) + " " + event
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// runAgent runs an agent headless in the project until it exits (at most agentTimeout),
// then waits for what it left running (async hooks, MCP servers) to end. It returns the
// agent's standard output and how long the session took.
func (w *world) runAgent(bin string, args []string, env ...string) (stdout string, took time.Duration) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), agentTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = w.project
	cmd.Env = append(append([]string(nil), w.env...), env...)
	// Files, not pipes: what the agent leaves running cannot hold Wait up.
	outFile, errFile := w.create("agent.stdout"), w.create("agent.stderr")
	defer outFile.Close()
	defer errFile.Close()
	cmd.Stdout, cmd.Stderr = outFile, errFile
	ownProcessGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	took = time.Since(start)
	stdout = w.read(outFile.Name())
	if err != nil {
		w.t.Errorf("%s %s: %v after %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(bin), strings.Join(args, " "), err,
			took.Round(time.Millisecond), tail(stdout), tail(w.read(errFile.Name())))
	}
	if err := waitForOrphans(15 * time.Second); err != nil {
		w.t.Error(err)
	}
	w.t.Logf("%s ran for %v", filepath.Base(bin), took.Round(time.Millisecond))
	return stdout, took
}

func (w *world) create(name string) *os.File {
	f, err := os.Create(filepath.Join(w.dir, name))
	if err != nil {
		w.t.Fatal(err)
	}
	return f
}

func tail(s string) string {
	if len(s) > 4000 {
		return "…" + s[len(s)-4000:]
	}
	return s
}

// payload is one hook payload the raw hook kept.
type payload struct {
	file   string // NN-<event>.json
	event  string // its hook_event_name
	fields map[string]json.RawMessage
}

func (p payload) str(name string) string {
	var s string
	_ = json.Unmarshal(p.fields[name], &s)
	return s
}

// payloads are the raw hook's payloads, in the order sent.
func (w *world) payloads() []payload {
	w.t.Helper()
	entries, err := os.ReadDir(w.raw)
	if err != nil {
		w.t.Fatal(err)
	}
	var out []payload
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		p := payload{file: e.Name()}
		if err := json.Unmarshal([]byte(w.read(filepath.Join(w.raw, e.Name()))), &p.fields); err != nil {
			w.t.Errorf("raw hook payload %s is no JSON object: %v", e.Name(), err)
			continue
		}
		p.event = p.str("hook_event_name")
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].file < out[j].file })
	if len(out) == 0 {
		w.t.Fatal("the raw hook kept no payload: the agent ran no hook")
	}
	return out
}

// settingsJSON reads a JSON settings file into a map, for the raw hook's entries to be
// added beside agmem's.
func (w *world) settingsJSON(path string) map[string]any {
	w.t.Helper()
	settings := map[string]any{}
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &settings); err != nil {
			w.t.Fatalf("%s: %v", path, err)
		}
	}
	return settings
}

func (w *world) writeJSON(path string, v any) {
	w.t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		w.t.Fatal(err)
	}
	w.write(path, string(b)+"\n")
}

// addRawHooks adds the raw hook, in a matcher group of its own, to each event of the
// settings' "hooks", keeping the groups already there (agmem's).
func (w *world) addRawHooks(settings map[string]any, events []string, group func(event, command string) map[string]any) {
	hooks, _ := settings["hooks"].(map[string]any)
	if hooks == nil {
		hooks = map[string]any{}
		settings["hooks"] = hooks
	}
	for _, event := range events {
		list, _ := hooks[event].([]any)
		hooks[event] = append(list, group(event, w.rawHook(event)))
	}
}

// mcpProxy is how the agents start the MCP filesystem server: behind agmem mcp proxy,
// serving the project.
func (w *world) mcpProxy() (command string, args []string) {
	return w.agmem, []string{"--repo", w.repo, "mcp", "proxy", "--name", "filesystem", "--", "node", w.fsMCP, w.project}
}
