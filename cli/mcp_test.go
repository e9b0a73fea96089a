package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agmem/agmem/mcp/mcptest"
)

// The test binary is also mcptest's MCP server, when run under its name.
func init() { mcptest.RunIfServer() }

// mcpServer is mcptest's server, installed in a directory of the test's.
func mcpServer(t *testing.T) string {
	t.Helper()
	path, err := mcptest.Install(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// mcpLines are the client's messages: the handshake, then one tools/call per
// "tool arguments" pair, with ids from 1.
func mcpLines(calls ...string) string {
	lines := []string{`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`}
	for i := 0; i+1 < len(calls); i += 2 {
		lines = append(lines, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i/2+1)+`,"method":"tools/call","params":{"name":"`+calls[i]+`","arguments":`+calls[i+1]+`}}`)
	}
	return strings.Join(lines, "\n") + "\n"
}

// proxy runs "agmem mcp proxy" in dir with the client's messages on stdin, and returns
// its stdout, stderr and exit code.
func proxy(t *testing.T, dir string, env []string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	return run(t, dir, env, stdin, append([]string{"mcp", "proxy"}, args...)...)
}

// replayed is each observation of session in the journal, as replay --json prints it.
func replayed(t *testing.T, dir, session string) []map[string]any {
	t.Helper()
	var obs []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(mustAgmem(t, dir, "", "replay", "--json", "--session", session)), "\n") {
		var o map[string]any
		if err := json.Unmarshal([]byte(l), &o); err != nil {
			t.Fatalf("replay --json: %v: %s", err, l)
		}
		obs = append(obs, o)
	}
	return obs
}

func TestMCPProxyExitsAsTheServerDidOnceItRecordedWhatItHad(t *testing.T) {
	server := mcpServer(t)
	for _, tt := range []struct {
		code, want string
		exit       int
	}{{"7", "exit status 7", 7}, {"2", "exit status 2", 1}} {
		dir := t.TempDir()
		mustAgmem(t, dir, "", "init", ".")
		session := "crash-" + tt.code
		out, stderr, exit := proxy(t, dir, []string{"AGMEM_SESSION=" + session}, mcpLines(
			"echo", `{"text":"an answer long enough to be captured by the capture rules"}`,
			"hang", `{}`,
			"crash", `{"code":`+tt.code+`}`), "--", server)
		if exit != tt.exit || !strings.Contains(stderr, "agmem: mcp proxy: the server ended ("+tt.want+")") {
			t.Errorf("server exit %s: agmem exited %d, stderr %q", tt.code, exit, stderr)
		}
		if tt.exit == 1 && !strings.Contains(stderr, `agmem: hint: agmem exits 1 for it: agents read 2 as "block"`) {
			t.Errorf("no hint for exit 2: %q", stderr)
		}
		if !strings.Contains(out, "an answer long enough") {
			t.Errorf("the answer before the crash was not relayed: %q", out)
		}
		obs := replayed(t, dir, session)
		if len(obs) != 3 || obs[0]["error"] != nil || obs[1]["error"] != "no answer: the server ended ("+tt.want+")" ||
			obs[2]["tool_name"] != "mcp__mcp-test-server__crash" {
			t.Errorf("recorded %v", obs)
		}
	}
}

func TestMCPProxyForwardsSIGTERMToTheServer(t *testing.T) {
	dir := t.TempDir()
	mustAgmem(t, dir, "", "init", ".")
	cmd := exec.Command("agmem", "mcp", "proxy", "--name", "t", "--", mcpServer(t))
	cmd.Dir = dir
	cmd.Env = append(gitEnv(dir), "AGMEM_SESSION=signalled")
	in, _ := cmd.StdinPipe()
	outPipe, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out := bufio.NewReader(outPipe)
	in.Write([]byte(mcpLines("hang", `{}`)))
	if l, err := out.ReadString('\n'); err != nil || !strings.Contains(l, "serverInfo") {
		t.Fatalf("initialize answered %q, %v", l, err)
	}
	time.Sleep(50 * time.Millisecond) // the call is on its way
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	if cmd.ProcessState.ExitCode() != 3 || !strings.Contains(stderr.String(), "mcp-test-server: got terminated") {
		t.Fatalf("agmem ended %v; stderr %q", err, stderr.String())
	}
	obs := replayed(t, dir, "signalled")
	if len(obs) != 1 || obs[0]["tool_name"] != "mcp__t__hang" || obs[0]["error"] != "no answer: the server ended (exit status 3)" {
		t.Errorf("recorded %v", obs)
	}
}

func TestMCPProxyRelaysWhenTheJournalCannotBeWritten(t *testing.T) {
	dir := t.TempDir()
	mustAgmem(t, dir, "", "init", ".")
	journal := filepath.Join(dir, ".agmem", "journal.db")
	if err := os.Remove(journal); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(journal, 0o755); err != nil { // even root cannot open it as a file
		t.Fatal(err)
	}
	text := `{"text":"an answer long enough to be captured by the capture rules"}`
	out, stderr, exit := proxy(t, dir, nil, mcpLines("echo", text, "echo", text, "echo", text), "--", mcpServer(t))
	if exit != 0 || strings.Count(out, "an answer long enough") != 3 {
		t.Errorf("exit %d; relayed %q", exit, out)
	}
	if strings.Count(stderr, "agmem: mcp proxy: calls are not being recorded (relaying goes on): ") != 1 {
		t.Errorf("stderr: %q", stderr)
	}
}

// npmDir holds the real MCP server and client, pinned; scripts/test.sh installs them.
var npmDir = filepath.Join("..", "mcp", "testdata", "npm")

// TestMCPProxyBetweenARealClientAndARealServer puts the proxy between the TypeScript
// SDK's stdio client and @modelcontextprotocol/server-filesystem, from npm, as an agent
// would: the client lists the tools, writes a file, reads it back and reads one that is
// not there; then the session is flushed, and git and agmem replay read it back.
func TestMCPProxyBetweenARealClientAndARealServer(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed, so the real MCP server and client cannot run; scripts/test.sh installs it")
	}
	npm, _ := filepath.Abs(npmDir)
	fsServer := filepath.Join(npm, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
	if _, err := os.Stat(fsServer); err != nil {
		t.Fatalf("the npm packages are not installed: run \"npm ci\" in %s (scripts/test.sh does)", npm)
	}
	dir := t.TempDir()
	repo, work := filepath.Join(dir, "memory"), filepath.Join(dir, "work")
	mustAgmem(t, dir, "", "init", repo)
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(node, filepath.Join(npm, "client.mjs"), work, "--",
		"agmem", "--repo", repo, "mcp", "proxy", "--name", "fs", "--", node, fsServer, work)
	cmd.Env = append(gitEnv(dir), "AGMEM_SESSION=e2e")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the client: %v\n%s", err, stderr.String())
	}
	var got struct {
		Tools                []string
		Notes                string
		Write, Read, Missing struct {
			Content []struct{ Text string }
			IsError bool
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the client printed %s: %v", out, err)
	}
	if !strings.Contains(strings.Join(got.Tools, " "), "read_text_file") || got.Write.IsError ||
		len(got.Read.Content) != 1 || got.Read.Content[0].Text != got.Notes || !got.Missing.IsError {
		t.Fatalf("through the proxy, the client got %s", out)
	}
	if data, err := os.ReadFile(filepath.Join(work, "notes.md")); err != nil || string(data) != got.Notes {
		t.Fatalf("notes.md: %q, %v", data, err)
	}
	if !strings.Contains(stderr.String(), "Secure MCP Filesystem Server running on stdio") {
		t.Errorf("the server's stderr did not pass through: %q", stderr.String())
	}

	obs := replayed(t, repo, "e2e")
	want := []struct{ tool, result, err string }{
		{"mcp__fs__write_file", "Successfully wrote to " + filepath.Join(work, "notes.md"), ""},
		{"mcp__fs__read_text_file", got.Notes, ""},
		{"mcp__fs__read_text_file", "", "ENOENT: no such file or directory"},
	}
	if len(obs) != len(want) {
		t.Fatalf("recorded %d observations, want %d: %v", len(obs), len(want), obs)
	}
	for i, w := range want {
		o := obs[i]
		errText, _ := o["error"].(string)
		if o["tool_name"] != w.tool || o["source"] != "mcp" || (w.result != "" && o["result"] != w.result) ||
			!strings.HasPrefix(errText, w.err) || (w.err == "") != (errText == "") {
			t.Errorf("observation %d: %v, want %+v", i, o, w)
		}
	}

	if out := mustAgmem(t, repo, "", "flush"); !strings.HasSuffix(out, " e2e 3 observations\n") {
		t.Fatalf("flush: %q", out)
	}
	if s := git(t, repo, "log", "-1", "--format=%(trailers:key=Agmem-Session,valueonly)%(trailers:key=Agmem-Observations,valueonly)%(trailers:key=Agmem-Source,valueonly)"); s != "e2e\n3\nmcp\n\n" {
		t.Errorf("trailers: %q", s)
	}
	files := git(t, repo, "show", "--name-only", "--format=", "HEAD")
	for _, f := range []string{"current/episodic/", "-mcp__fs__write_file-", "-mcp__fs__read_text_file-", "current/semantic/", "/e2e/"} {
		if !strings.Contains(files, f) {
			t.Errorf("the commit has no %s: %s", f, files)
		}
	}
	git(t, repo, "fsck", "--strict")
	if s := git(t, repo, "status", "--porcelain"); s != "" {
		t.Errorf("git status: %q", s)
	}
	// a clone has no journal: replay reads the session from the commit
	clone := filepath.Join(dir, "clone")
	git(t, dir, "clone", "-q", repo, clone)
	mustAgmem(t, dir, "", "init", clone)
	timeline := mustAgmem(t, clone, "", "replay", "--session", "e2e")
	for _, w := range []string{"[episodic] mcp__fs__write_file path=" + work, "[semantic] mcp__fs__read_text_file path=" + filepath.Join(work, "notes.md"),
		"! [semantic] mcp__fs__read_text_file path=" + filepath.Join(work, "missing.md") + "  error: ENOENT"} {
		if !strings.Contains(timeline, w) {
			t.Errorf("replay has no %q:\n%s", w, timeline)
		}
	}
}
