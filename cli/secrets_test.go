package cli_test

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// randomFrom returns n characters drawn from alphabet: each run makes new secrets, so
// that none of them can be found in the repo by accident or by memory.
func randomFrom(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		k, _ := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		b[i] = alphabet[k.Int64()]
	}
	return string(b)
}

const (
	alnum  = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	digits = "0123456789"
)

// secretCorpus is a session of an agent that handles secrets of many kinds, in every
// place a hook payload can hold one, and the secrets it holds.
func secretCorpus() (payloads []string, secrets map[string]string) {
	secrets = map[string]string{
		"github-pat":      "ghp_" + randomFrom(alnum, 36),
		"github-fine":     "github_pat_" + randomFrom(alnum, 82),
		"aws-key-id":      "AKIA" + randomFrom(upper, 16),
		"aws-secret":      randomFrom(alnum+"/+", 40),
		"slack-bot":       "xoxb-" + randomFrom(digits, 12) + "-" + randomFrom(digits, 12) + "-" + randomFrom(alnum, 24),
		"stripe":          "sk_live_" + randomFrom(alnum, 32),
		"google-api":      "AIza" + randomFrom(alnum+"-_", 35),
		"npm":             "npm_" + randomFrom(alnum, 36),
		"anthropic":       "sk-ant-api03-" + randomFrom(alnum+"-_", 93) + "AA",
		"env-password":    "pw-" + randomFrom(alnum, 14),
		"json-api-key":    randomFrom(alnum, 28),
		"url-password":    randomFrom(alnum, 16),
		"bearer":          randomFrom(alnum, 30) + "." + randomFrom(alnum, 20),
		"basic":           randomFrom(alnum, 24),
		"cookie":          randomFrom(alnum, 26),
		"flag-password":   randomFrom(alnum, 12),
		"prompt-token":    "tok_" + randomFrom(alnum, 24),
		"private-key":     randomFrom(alnum+"+/", 64),
		"yaml-secret":     randomFrom(alnum, 20),
		"nested-password": randomFrom(alnum, 18),
		"error-token":     randomFrom(alnum, 22),
		"summary-token":   randomFrom(alnum, 22),
		"tool-name-pat":   "ghp_" + randomFrom(alnum, 36),
		"env-file":        randomFrom(alnum, 20),
		"key-name-pat":    "ghp_" + randomFrom(alnum, 36),
		"nested-secret":   randomFrom(alnum, 20),
		"pair-password":   randomFrom(alnum, 20),
		"agent-id-pat":    "ghp_" + randomFrom(alnum, 36),
		"straddling-pat":  "ghp_" + randomFrom(alnum, 36),
	}
	s := secrets
	hook := func(fields map[string]any) string {
		fields["session_id"] = "secret-session"
		fields["cwd"] = "/work/app"
		out, _ := json.Marshal(fields)
		return string(out)
	}
	call := func(n int, tool string, input, response any) string {
		return hook(map[string]any{"hook_event_name": "PostToolUse", "tool_name": tool, "tool_input": input,
			"tool_response": response, "tool_use_id": fmt.Sprintf("toolu_%02d", n)})
	}
	key := "-----BEGIN RSA PRIVATE KEY-----\n" + s["private-key"] + "\n" + s["private-key"] + "\n-----END RSA PRIVATE KEY-----\n"
	payloads = []string{
		hook(map[string]any{"hook_event_name": "SessionStart", "source": "startup", "model": "claude"}),
		hook(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "deploy with token=" + s["prompt-token"] + " please"}),
		call(1, "Bash", map[string]any{"command": "git push https://" + s["github-pat"] + "@github.com/acme/app.git", "description": "push"},
			map[string]any{"stdout": "export AWS_ACCESS_KEY_ID=" + s["aws-key-id"] + "\nexport AWS_SECRET_ACCESS_KEY=" + s["aws-secret"] + "\n", "stderr": "", "interrupted": false}),
		call(2, "Read", map[string]any{"file_path": "/work/app/config/settings.json"},
			map[string]any{"type": "text", "file": map[string]any{"filePath": "/work/app/config/settings.json",
				"content": `{"slack": "` + s["slack-bot"] + `", "stripe_key": "` + s["stripe"] + `", "maps": "` + s["google-api"] + `", "api_key": "` + s["json-api-key"] + `"}`}}),
		call(3, "Write", map[string]any{"file_path": "/work/app/.npmrc", "content": "//registry.npmjs.org/:_authToken=" + s["npm"] + "\n"}, map[string]any{"type": "create"}),
		call(4, "Bash", map[string]any{"command": `curl -H "Authorization: Bearer ` + s["bearer"] + `" -H "Cookie: session=` + s["cookie"] + `" https://api.acme.dev`},
			"HTTP/1.1 200 OK\nAuthorization: Basic "+s["basic"]+"\n"+strings.Repeat("body ", 20)),
		call(5, "Bash", map[string]any{"command": "psql postgres://app:" + s["url-password"] + "@db:5432/app && mysql --password " + s["flag-password"] + " -e 'select 1'"},
			strings.Repeat("row ", 20)),
		call(6, "Read", map[string]any{"file_path": "/work/app/deploy/id_deploy"}, map[string]any{"type": "text", "file": map[string]any{"content": key}}),
		call(7, "mcp__vault__put", map[string]any{"path": "kv/app", "data": map[string]any{"db": map[string]any{"password": s["nested-password"]}},
			"anthropic": s["anthropic"]}, "stored "+strings.Repeat("ok ", 20)),
		call(8, "Read", map[string]any{"file_path": "/work/app/k8s/values.yaml"}, "app:\n  client_secret: "+s["yaml-secret"]+"\n  github: "+s["github-fine"]+"\n"+strings.Repeat("# pad\n", 10)),
		call(9, "Bash", map[string]any{"command": "./configure"}, nil),
		hook(map[string]any{"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_input": map[string]any{"command": "deploy"},
			"tool_use_id": "toolu_10", "error": "auth failed for secret=" + s["error-token"]}),
		hook(map[string]any{"hook_event_name": "Stop", "last_assistant_message": "Pushed with " + s["github-pat"] + "."}),
		call(11, "Read", map[string]any{"file_path": "/work/app/.env"}, map[string]any{"type": "text",
			"file": map[string]any{"content": "APP_NAME=shop\nSESSION_SALT=" + s["env-file"] + "\n"}}),
		call(12, "mcp__http__request", map[string]any{"headers": map[string]any{s["key-name-pat"]: "v"},
			"auth": map[string]any{"secret": map[string]any{"data": s["nested-secret"]}},
			"env":  []any{map[string]any{"name": "DB_PASSWORD", "value": s["pair-password"]}}}, strings.Repeat("ok ", 20)),
		hook(map[string]any{"hook_event_name": "PostToolUse", "tool_name": "Bash", "agent_id": s["agent-id-pat"], "tool_use_id": "toolu_13",
			"tool_input": map[string]any{"command": "cat big.log"},
			// over the bound set by the test (4 KiB), the token straddling the cut
			"tool_response": strings.Repeat("password=hunter2hunter2 ", 170) + strings.Repeat(".", 20) + s["straddling-pat"] + strings.Repeat(" tail", 100)}),
	}
	native, _ := json.Marshal(map[string]any{"tool_name": "mcp__x__call_" + s["tool-name-pat"], "session_id": "secret-session",
		"arguments": map[string]any{"q": "x"}, "result": strings.Repeat("r", 60), "summary": "used api_key=" + s["summary-token"]})
	payloads = append(payloads, string(native))
	return payloads, secrets
}

// TestSecretsNeverReachDisk records a session full of secrets, flushes it, and looks for
// every secret in the journal file, in every git object and in every file of the repo:
// none may be there. The repo must still record, flush and pass git fsck --strict.
func TestSecretsNeverReachDisk(t *testing.T) {
	dir := t.TempDir()
	mustAgmem(t, dir, "", "init")
	os.WriteFile(filepath.Join(dir, ".agmem", "config.toml"), []byte("[capture]\nmax_value_bytes = 4096\n"), 0o644)
	payloads, secrets := secretCorpus()
	for _, p := range payloads {
		mustAgmem(t, dir, p, "record")
	}
	// The same payloads once more as one --jsonl batch, under other tool_use_ids.
	batch := strings.ReplaceAll(strings.Join(payloads, "\n"), "toolu_", "toolu_b")
	mustAgmem(t, dir, batch, "record", "--jsonl")
	mustAgmem(t, dir, "", "record", "--tool", "deploy", "--arg", "password="+secrets["env-password"], "--result", "DB_PASSWORD="+secrets["env-password"]+strings.Repeat(" ok", 20))
	mustAgmem(t, dir, "", "flush")

	var places []output
	add := func(name string, data []byte) { places = append(places, output{name, data}) }
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			data, _ := os.ReadFile(path)
			add(path, data)
		}
		return nil
	})
	objects := exec.Command("git", "cat-file", "--batch-all-objects", "--batch")
	objects.Dir = dir
	all, err := objects.Output()
	if err != nil {
		t.Fatal(err)
	}
	add("git objects", all)
	add("replay", []byte(mustAgmem(t, dir, "", "replay", "--session", "secret-session", "--json", "--events")))
	add("git log", []byte(git(t, dir, "log", "--format=%B")))
	places = append(places, readBack(t, dir)...)
	noSecretIn(t, secrets, places)
	for _, shape := range []string{"^withheld: ", "^truncated:", "^redactions: [1-9]"} {
		if git(t, dir, "grep", "-c", "-e", shape, "--", "current") == "" {
			t.Errorf("no committed file matches %q: the corpus misses a shape it means to test", shape)
		}
	}
	if !bytes.Contains(all, []byte("[REDACTED:")) {
		t.Error("no redaction mark in any git object")
	}
	if n := redactionTrailers(t, dir); n < len(secrets) {
		t.Errorf("Agmem-Redactions trailers add up to %d, fewer than the %d secrets", n, len(secrets))
	}

	ids := lines(mustAgmem(t, dir, observations(5, 1, "after"), "record", "--jsonl"))
	mustAgmem(t, dir, "", "flush")
	if len(ids) != 5 {
		t.Fatalf("recorded %d observations after the secrets, want 5", len(ids))
	}
	checkRepoSettled(t, dir)
}

// output is what a command printed, or a file held, by its name.
type output struct {
	name string
	data []byte
}

// readBack is what reading the memory repo dir back gives of the secret corpus's
// session: search, show, timeline, context, the MCP server.
func readBack(t *testing.T, dir string) []output {
	t.Helper()
	var places []output
	add := func(name string, data []byte) { places = append(places, output{name, data}) }
	var shown []string
	for _, words := range []string{"password OR token OR key OR secret", "bearer OR basic OR cookie OR authorization",
		"aws OR github OR slack OR stripe OR npm OR anthropic OR vault", "deploy OR curl OR psql OR push OR configure",
		"redacted OR withheld OR truncated", "private OR env OR yaml OR json"} {
		out := mustAgmem(t, dir, "", "search", "--json", "--limit", "1000", words)
		add("search "+words, []byte(out))
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			var h struct{ ID string }
			if json.Unmarshal([]byte(l), &h) == nil && h.ID != "" {
				shown = append(shown, h.ID)
			}
		}
	}
	if len(shown) < 10 {
		t.Fatalf("the searches found %d entries: too few to check", len(shown))
	}
	add("show", []byte(mustAgmem(t, dir, "", append([]string{"show", "--json"}, shown...)...)))
	add("show, as text", []byte(mustAgmem(t, dir, "", append([]string{"show"}, shown...)...)))
	add("timeline", []byte(mustAgmem(t, dir, "", "timeline", "--before", "100", "--after", "100", shown[0])))
	add("context", []byte(mustAgmem(t, dir, "", "context", "--project", "/work/app", "--format", "json")))
	idList, _ := json.Marshal(shown[:min(len(shown), 100)])
	mcpIn := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"password OR token OR key OR secret","limit":1000}}}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_observations","arguments":{"ids":` + string(idList) + `}}}
{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"sessions","arguments":{}}}
`
	mcpOut := mcpServe(t, dir, mcpIn, 4)
	if strings.Count(mcpOut, `"result"`) != 4 || strings.Contains(mcpOut, `"isError":true`) {
		t.Fatalf("mcp serve answered %s", mcpOut)
	}
	add("mcp serve", []byte(mcpOut))
	return places
}

// noSecretIn fails t for each secret that any 12 characters of stand in one of places:
// a secret cut in half is still a leak.
func noSecretIn(t *testing.T, secrets map[string]string, places []output) {
	t.Helper()
	for name, secret := range secrets {
		for _, p := range places {
			for i := 0; i+12 <= len(secret); i += 4 {
				if part := secret[i : i+12]; bytes.Contains(p.data, []byte(part)) {
					t.Errorf("secret %s (%s) is in %s: %q", name, secret, p.name, part)
					break
				}
			}
		}
	}
}

// TestFetchedSecretsAreNotGivenBack: another memory repo, which let secrets in (its
// redact.allow matching everything, as a teammate may set it), pushes the secret corpus,
// and a session whose id holds one; what this repo gives back of the branch it pulled
// holds none of them, and that session is listed and replayed by its id made safe.
func TestFetchedSecretsAreNotGivenBack(t *testing.T) {
	root := t.TempDir()
	remote := filepath.Join(root, "remote.git")
	git(t, root, "init", "-q", "--bare", remote)
	other, mine := filepath.Join(root, "other"), filepath.Join(root, "mine")
	for _, d := range []string{other, mine} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		mustAgmem(t, d, "", "init")
		git(t, d, "remote", "add", "origin", remote)
	}
	os.WriteFile(filepath.Join(other, ".agmem", "config.toml"), []byte("[redact]\nallow = [\".*\"]\n"), 0o644)
	payloads, secrets := secretCorpus()
	secrets["session-id-pat"] = "ghp_" + randomFrom(alnum, 36)
	for n := range 3 {
		payloads = append(payloads, fmt.Sprintf(`{"hook_event_name":"PostToolUse","session_id":"deploy-%s","cwd":"/work/app",`+
			`"tool_name":"Bash","tool_input":{"command":"deploy step %d"},"tool_response":"deployed the app to every region, and every check of it came back green","tool_use_id":"toolu_s%d"}`,
			secrets["session-id-pat"], n, n))
	}
	for _, p := range payloads {
		mustAgmem(t, other, p, "record")
	}
	mustAgmem(t, other, "", "flush")
	mustAgmem(t, other, "", "push")
	kept, theirs := 0, mustAgmem(t, other, "", "replay", "--session", "secret-session", "--json", "--events")
	for _, secret := range secrets {
		if strings.Contains(theirs, secret) {
			kept++
		}
	}
	if kept < len(secrets)/2 {
		t.Fatalf("the other repo kept %d of the %d secrets: too few to test", kept, len(secrets))
	}
	mustAgmem(t, mine, "", "pull")
	places := readBack(t, mine)
	places = append(places, output{"replay", []byte(mustAgmem(t, mine, "", "replay", "--session", "secret-session", "--json", "--events"))})
	listed := mustAgmem(t, mine, "", "sessions", "--all", "--json")
	places = append(places, output{"sessions", []byte(listed)})
	var safe string
	for _, l := range strings.Split(strings.TrimSpace(listed), "\n") {
		var s struct {
			ID string `json:"session_id"`
		}
		if json.Unmarshal([]byte(l), &s) == nil && strings.HasPrefix(s.ID, "deploy-[REDACTED:") {
			safe = s.ID
		}
	}
	if safe == "" {
		t.Fatalf("agmem sessions lists no session deploy-[REDACTED:…]:\n%s", listed)
	}
	// This repo goes on with the same session: its own call, and the fetched ones.
	mustAgmem(t, mine, fmt.Sprintf(`{"hook_event_name":"PostToolUse","session_id":"deploy-%s","cwd":"/work/app",`+
		`"tool_name":"Bash","tool_input":{"command":"deploy step 3"},"tool_response":"deployed the app to every region, and every check of it came back green","tool_use_id":"toolu_s3"}`,
		secrets["session-id-pat"]), "record")
	replayed := mustAgmem(t, mine, "", "replay", "--session", safe, "--json")
	if n := strings.Count(replayed, `"deploy step `); n != 4 {
		t.Errorf("replay --session %s gives %d of its 4 calls (3 fetched, 1 its own):\n%s", safe, n, replayed)
	}
	places = append(places, output{"replay of the session named by a secret", []byte(replayed)})
	noSecretIn(t, secrets, places)
}

// redactionTrailers adds up the Agmem-Redactions trailers of the branch.
func redactionTrailers(t *testing.T, dir string) int {
	total := 0
	for _, v := range strings.Fields(git(t, dir, "log", "--format=%(trailers:key=Agmem-Redactions,valueonly)")) {
		var n int
		fmt.Sscan(v, &n)
		total += n
	}
	return total
}

// mcpServe runs agmem mcp serve in dir, sends it the lines of in, and returns what it
// answered once it answered n requests: a client waits for its answers before it
// closes the server's input.
func mcpServe(t *testing.T, dir, in string, n int) string {
	t.Helper()
	cmd, _, errb := agmemCommand(dir, nil, "", "mcp", "serve")
	cmd.Stdin, cmd.Stdout = nil, nil
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, in)
	var out strings.Builder
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 64<<20)
	for answered := 0; answered < n && sc.Scan(); answered++ {
		out.WriteString(sc.Text() + "\n")
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("mcp serve: %v: %s", err, errb.String())
	}
	return out.String()
}
