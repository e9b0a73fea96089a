package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
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
	cmd := exec.Command("agmem", append([]string{"mcp", "proxy"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(gitEnv(dir), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
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
