package capture

import (
	"encoding/json"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/agmem/agmem/memory"
)

func sanitized(t *testing.T, p Policy, payload string) *memory.Observation {
	t.Helper()
	d, err := Decode([]byte(payload), p, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Entries) != 1 || d.Entries[0].Observation == nil {
		t.Fatalf("decoded %+v, want one observation", d)
	}
	return d.Entries[0].Observation
}

func TestSanitizeRedactsByKeyAndKeepsOrder(t *testing.T) {
	o := sanitized(t, defaultPolicy(), `{"tool_name":"mcp__db__connect","arguments":{"z":1,"password":"hunter22","a":{"api_key":"k-123456789","pin":48213377,"note":"see <docs> & more"},"token":"${TOKEN}"},"result":"connected with token=abcdef123456 ok ok ok ok ok ok ok ok ok ok"}`)
	want := `{"z":1,"password":"[REDACTED:secret-assignment]","a":{"api_key":"[REDACTED:secret-assignment]","pin":48213377,"note":"see <docs> & more"},"token":"${TOKEN}"}`
	if string(o.Arguments) != want {
		t.Errorf("arguments\n got %s\nwant %s", o.Arguments, want)
	}
	if got := o.ResultText(); got != "connected with token=[REDACTED:secret-assignment] ok ok ok ok ok ok ok ok ok ok" {
		t.Errorf("result %q", got)
	}
	if o.Redactions != 3 {
		t.Errorf("redactions = %d, want 3", o.Redactions)
	}
}

func TestSanitizeCutsLargeValues(t *testing.T) {
	p := defaultPolicy()
	p.MaxValue = 1024
	big := strings.Repeat("é", 1000) // 2000 bytes
	many := `[` + strings.Repeat(`"abcdefghij",`, 200) + `"end"]`
	o := sanitized(t, p, `{"tool_name":"Write","arguments":{"file_path":"a.txt","content":"`+big+`","lines":`+many+`},"result":"`+big+`","error":"`+big+`"}`)
	want := map[string]int{"arguments.content": 2000, "arguments.lines": 2607, "result": 2000, "error": 2000}
	for k, v := range want {
		if o.Truncated[k] != v {
			t.Errorf("truncated[%s] = %d, want %d (all: %v)", k, o.Truncated[k], v, o.Truncated)
		}
	}
	var args map[string]string
	if err := json.Unmarshal(o.Arguments, &args); err != nil {
		t.Fatalf("arguments are not an object of strings: %v\n%s", err, o.Arguments)
	}
	for k, v := range args {
		if len(v) > 1024+64 {
			t.Errorf("argument %s is %d bytes, over the bound", k, len(v))
		}
	}
	if !strings.HasSuffix(args["content"], "\n[TRUNCATED: 2000 bytes]") || !strings.HasPrefix(args["content"], "éé") {
		t.Errorf("content is not cut with a mark: %.40q…%q", args["content"], args["content"][len(args["content"])-30:])
	}
	if len(o.Result) > 1024+64 || len(o.Error) > 1024+64 {
		t.Errorf("result %d bytes, error %d bytes: over the bound", len(o.Result), len(o.Error))
	}
}

func TestSanitizeBoundsNesting(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 100) + `"password=hunter2hunter2"` + strings.Repeat("}", 100)
	o := sanitized(t, defaultPolicy(), `{"tool_name":"x","arguments":`+deep+`}`)
	if d := depthOf(t, o.Arguments); d > maxDepth+1 {
		t.Errorf("arguments keep %d levels of nesting", d)
	}
	if strings.Contains(string(o.Arguments), "hunter2") || o.Redactions != 1 {
		t.Errorf("the secret in the flattened part is not redacted (%d): %s", o.Redactions, o.Arguments)
	}
	if !json.Valid(o.Arguments) {
		t.Errorf("arguments are not JSON: %s", o.Arguments)
	}
}

func depthOf(t *testing.T, raw []byte) int {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	depth, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return deepest
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			deepest = max(deepest, depth)
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
}

func TestSanitizeWithholdsSecretFiles(t *testing.T) {
	for _, path := range []string{"/home/u/app/.env", ".env.local", `C:\Users\u\.ssh\config`, "/home/u/.aws/credentials", "keys/server.PEM", "/root/.ssh/id_ed25519"} {
		in, _ := json.Marshal(map[string]any{"tool_name": "Edit", "arguments": map[string]any{"file_path": path, "old_string": "A=1", "new_string": "A=2", "replace_all": true},
			"result": "The file has been updated with A=2 and more text here."})
		o := sanitized(t, defaultPolicy(), string(in))
		if o.Withheld == "" || strings.Contains(string(o.Arguments), "A=") || strings.Contains(string(o.Result), "A=2") {
			t.Errorf("%s: not withheld: %s %s", path, o.Arguments, o.Result)
		}
		if !strings.Contains(string(o.Arguments), `"replace_all":true`) || FilePath(o.Arguments) != path {
			t.Errorf("%s: the path and flags are not kept: %s", path, o.Arguments)
		}
	}
	o := sanitized(t, defaultPolicy(), `{"tool_name":"Read","arguments":{"file_path":"src/environment.go"},"result":"package main // a result long enough to be worth keeping"}`)
	if o.Withheld != "" {
		t.Errorf("src/environment.go withheld by %s", o.Withheld)
	}
}

// TestSanitizeWithholdsSecretFilesPrinted: a shell command that prints a withheld file
// gives back its contents, withheld as a read of it is; the command is kept.
func TestSanitizeWithholdsSecretFilesPrinted(t *testing.T) {
	o := sanitized(t, defaultPolicy(), `{"tool_name":"Bash","arguments":{"command":"cat ~/.netrc"},"result":"machine h login bob password Zx9 plus a long enough result"}`)
	if o.Withheld != "**/.netrc" || strings.Contains(string(o.Result), "Zx9") || Command(o.Arguments) != "cat ~/.netrc" {
		t.Errorf("withheld %q: %s %s", o.Withheld, o.Arguments, o.Result)
	}
	// failed, its output is its error
	o = sanitized(t, defaultPolicy(), `{"tool_name":"Bash","arguments":{"command":"cat .env .env.local"},"error":"Exit code 1\nMERCHANT_ID=Zx9Hq7Lw2Pk4Vb8Nc3Md\ncat: .env.local: No such file"}`)
	if o.Withheld != "**/.env*" || strings.Contains(o.Error, "Zx9") {
		t.Errorf("failed, withheld %q: error %q", o.Withheld, o.Error)
	}
}

// TestSanitizeNamedValues: a value is held under the name its object gives it, in
// either order and case, as AWS and CloudFormation write them too.
func TestSanitizeNamedValues(t *testing.T) {
	o := sanitized(t, defaultPolicy(), `{"tool_name":"t","arguments":{"env":[{"value":"Qw900VeryRandomValue9x","name":"DB_PASSWORD"},`+
		`{"ParameterKey":"DBPassword","ParameterValue":"Qw901VeryRandomValue9x"},{"Name":"API_TOKEN","Value":"Qw902VeryRandomValue9x"},`+
		`{"value":"db.local","name":"DB_HOST"}]},"result":"printed Qw900VeryRandomValue9x and more of a result"}`)
	if s := string(o.Arguments) + string(o.Result); strings.Contains(s, "Qw90") || !strings.Contains(s, "db.local") {
		t.Errorf("%s %s", o.Arguments, o.Result)
	}
}

func TestWithheldBy(t *testing.T) {
	for _, c := range []struct {
		glob, path string
		want       bool
	}{
		{"**/.env*", ".env", true},
		{"**/.env*", "/a/b/.env.production", true},
		{"**/.env*", "/a/.envoy/x", false},
		{"**/.ssh/**", "/home/u/.ssh/known_hosts", true},
		{"**/.ssh/**", "/home/u/ssh/x", false},
		{"*.pem", "/etc/tls/ca.pem", true},
		{"secrets/*", "secrets/a", true},
		{"secrets/*", "x/secrets/a", false},
		{"secrets/**", "secrets", true},
		{"secrets/**", "secrets/a/b", true},
		{"a/**/b/*.go", "a/b/c.go", true},
		{"a/**/b/*.go", "a/x/y/b/c.go", true},
		{"a/**/b/*.go", "a/x/y/b/c/d.go", false},
		{"a/b/", "a/b", false},
		{"a/b/", "a/b/", true},
		{`a/\*`, "a/*", true},
		{`a/\*`, "a/b", false},
		{"A/B", "a/b", true},
		{"**/a/*/b", "x/a/y/b", true},
		{"**/a/*/b", "a/y/b", true},
		{"**/a/*/b", "a/b", false},
		{"**/a/**/b", "a/b", true},
		{"**/.aws/credentials", "/home/u/.aws/credentials", true},
		{"**/.aws/credentials", "/home/u/.aws/x/credentials", false},
		{"**/**", "a/b", true},
		{"**", "a", true}, // no "/": the base name, which "**" matches as "*" would
		{"**/.ssh/**", "/home/u/.ssh/sub/config", true},
		{"**/**/a", "a", true},
		{"[", "[", false}, // a bad pattern matches nothing
	} {
		p := Policy{Withhold: []string{c.glob}}
		if got := p.withheldBy(c.path) == c.glob; got != c.want {
			t.Errorf("withheldBy(%q) with %q = %v", c.path, c.glob, got)
		}
	}
}

func TestEventsAreRedacted(t *testing.T) {
	d, err := Decode([]byte(`{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"use password=hunter22 for the db"}`), defaultPolicy(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	e := d.Entries[0].Event
	if e.Text != "use password=[REDACTED:secret-assignment] for the db" || e.Redactions != 1 {
		t.Errorf("event text %q, %d redactions", e.Text, e.Redactions)
	}
}

// TestSanitizeReviewedLeaks holds the shapes that once kept a secret: each must go.
func TestSanitizeReviewedLeaks(t *testing.T) {
	pat := "ghp_1234567890abcdefghijABCDEFGHIJ123456"
	long := strings.Repeat("output ", 20)
	for _, c := range []struct{ name, payload, secret string }{
		{"secret in a member name", `{"tool_name":"x","arguments":{"headers":{"` + pat + `":"v"}},"result":"` + long + `"}`, pat},
		{"object under a secret key", `{"tool_name":"x","arguments":{"password":{"value":"hunter2hunter2"}},"result":"` + long + `"}`, "hunter2hunter2"},
		{"name and value pair", `{"tool_name":"x","arguments":{"env":[{"name":"DB_PASSWORD","value":"Zx81Qp0LmN"}]},"result":"` + long + `"}`, "Zx81Qp0LmN"},
		{"header pair", `{"tool_name":"x","arguments":{"headers":[{"name":"Authorization","value":"Bearer Zx81Qp0LmN3vB7cK"}]},"result":"` + long + `"}`, "Zx81Qp0LmN3vB7cK"},
		{"agent id", `{"tool_name":"x","agent_id":"` + pat + `","result":"` + long + `"}`, pat},
		{"tool use id", `{"tool_name":"x","tool_use_id":"` + pat + `","result":"` + long + `"}`, pat},
		{"prompt id", `{"tool_name":"x","prompt_id":"p-` + pat + `","result":"` + long + `"}`, pat},
		{"prompt id of a hook", `{"session_id":"c1","hook_event_name":"PostToolUse","tool_name":"Bash","prompt_id":"` + pat + `","tool_input":{"command":"ls"},"tool_response":{"stdout":"` + long + `","stderr":""}}`, pat},
		{"number under a secret key", `{"tool_name":"x","arguments":{"pin_password":48213377123},"result":"` + long + `"}`, "48213377123"},
		// A secret a rule found in one value, repeated where no rule would find it: in a
		// value after it, and in one before it (the second pass).
		{"secret repeated in the result", `{"tool_name":"Bash","arguments":{"command":"export DB_PASSWORD=Zq8vLm3pRt6Wx && echo connected as $DB_PASSWORD"},"result":"connected as Zq8vLm3pRt6Wx, ` + long + `"}`, "Zq8vLm3pRt6Wx"},
		{"secret found in the result, given in the arguments", `{"tool_name":"Bash","arguments":{"command":"login --as ana Zq8vLm3pRt6Wx"},"result":"password=Zq8vLm3pRt6Wx accepted, ` + long + `"}`, "Zq8vLm3pRt6Wx"},
		{"secret found in the error, given in the result", `{"tool_name":"Bash","arguments":{"command":"login"},"result":"trying Zq8vLm3pRt6Wx ` + long + `","error":"refused: password=Zq8vLm3pRt6Wx"}`, "Zq8vLm3pRt6Wx"},
		{"number seen as a secret, repeated", `{"tool_name":"x","arguments":{"pin_password":48213377123,"note":"pin 48213377123"},"result":"` + long + `"}`, "48213377123"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := sanitized(t, defaultPolicy(), c.payload)
			all, _ := json.Marshal(o)
			if strings.Contains(string(all), c.secret) {
				t.Errorf("the secret is kept: %s", all)
			}
		})
	}
	d, err := Decode([]byte(`{"event":"password=hunter2hunter2 `+pat+`","session_id":"s","attrs":{"`+pat+`":"v","cmd":"mysql -p hunter2hunter2"}}`), defaultPolicy(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if all, _ := json.Marshal(d.Entries[0]); strings.Contains(string(all), pat) || strings.Contains(string(all), "hunter2") {
		t.Errorf("an event's name or attribute keeps a secret: %s", all)
	}
}

// TestSanitizePrintedSecrets: what a command that prints a secret gives back is the
// secret's value alone, which no rule finds, in each agent's shape of a call's result.
func TestSanitizePrintedSecrets(t *testing.T) {
	const secret = "Zq8vLm3pRt6Wx"          // no rule's: found only as what the command printed
	long := strings.Repeat(`migrated\n`, 8) // a result too short is not captured
	for _, c := range []struct{ name, payload string }{
		{"claude", `{"session_id":"c1","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"echo $DB_PASSWORD"},"tool_response":{"stdout":"` + secret + `","stderr":"","interrupted":false,"isImage":false}}`},
		{"claude failed", `{"session_id":"c1","hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"printenv DB_PASSWORD && false"},"error":"Exit code 1\n` + secret + `"}`},
		{"codex", `{"session_id":"x1","turn_id":"t1","hook_event_name":"PostToolUse","tool_name":"shell","tool_input":{"command":["bash","-lc","source .env && echo $API_KEY"]},"tool_response":"` + secret + `\n"}`},
		{"gemini", `{"session_id":"g1","hook_event_name":"AfterTool","timestamp":"2026-11-30T10:00:00Z","tool_name":"run_shell_command","tool_input":{"command":"aws configure get aws_secret_access_key"},"tool_response":{"llmContent":"Output: ` + long + secret + `\nExit Code: 0","returnDisplay":"` + secret + `"}}`},
		{"native", `{"tool_name":"exec","arguments":{"cmd":"gh auth token"},"result":"` + long + secret + `"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := sanitized(t, defaultPolicy(), c.payload)
			all, _ := json.Marshal(o)
			if strings.Contains(string(all), secret) {
				t.Errorf("the printed secret is kept: %s", all)
			}
			if o.Redactions == 0 {
				t.Errorf("no redaction counted: %s", all)
			}
		})
	}
	// What is not a string is kept, and so is the output of a command that prints none.
	o := sanitized(t, defaultPolicy(), `{"session_id":"c1","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"echo $API_TOKEN"},"tool_response":{"stdout":"`+long+secret+`","interrupted":false,"code":0}}`)
	if want := `{"stdout":"[REDACTED:secret-assignment]","interrupted":false,"code":0}`; string(o.Result) != want {
		t.Errorf("result %s, want %s", o.Result, want)
	}
	o = sanitized(t, defaultPolicy(), `{"session_id":"c1","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"echo $HOME"},"tool_response":{"stdout":"`+long+`/home/ana-`+secret+`"}}`)
	if !strings.Contains(string(o.Result), secret) || o.Redactions != 0 {
		t.Errorf("the output of echo $HOME was redacted: %s", o.Result)
	}
}

func TestSanitizeCutKeepsNoHalfSecret(t *testing.T) {
	p := defaultPolicy()
	p.MaxValue = 1024
	pat := "ghp_1234567890abcdefghijABCDEFGHIJ123456"
	// Earlier redactions shrink the text by more than the reach past the cut.
	value := "password=" + strings.Repeat("Qz7", 1667) + " " + strings.Repeat(".", 10) + pat + " tail"
	o := sanitized(t, p, `{"tool_name":"x","result":"`+value+`"}`)
	if strings.Contains(string(o.Result), "ghp_1234") || strings.Contains(string(o.Result), "Qz7") {
		t.Errorf("a cut keeps part of a secret: %s", o.Result)
	}
}

func TestWithheldBeforeRedaction(t *testing.T) {
	o := sanitized(t, defaultPolicy(), `{"tool_name":"Write","arguments":{"file_path":".env","content":"DB_PASSWORD=Zx81Qp0LmN\nghp_1234567890abcdefghijABCDEFGHIJ123456"}}`)
	if o.Withheld == "" || o.Redactions != 0 {
		t.Errorf("withheld %q with %d redactions: the withheld content was redacted first", o.Withheld, o.Redactions)
	}
	o = sanitized(t, defaultPolicy(), `{"tool_name":"Read","arguments":{"file_path":".env","path":{"nested":"DB_PASSWORD=Zx81Qp0LmN"}}}`)
	if strings.Contains(string(o.Arguments), "Zx81Qp0LmN") {
		t.Errorf("a path key holding an object keeps its contents: %s", o.Arguments)
	}
}

// defaultPolicy is the policy of the built-in configuration.
func defaultPolicy() Policy { return DefaultPolicy() }

// FuzzWithheldBy holds the glob matcher to the plain one it replaced, which split the
// glob at every call, tried a "**" at every place and matched every segment with
// path.Match.
func FuzzWithheldBy(f *testing.F) {
	for _, c := range [][2]string{{"**/.ssh/**", "/home/u/.ssh/sub/config"}, {"**/**/a", "a"}, {"a/**/b/*.go", "a/x/b/c.go"},
		{"a//b/", "a//b/"}, {`a/\*/[b-c]`, "a/*/c"}, {"**/.env*", `C:\x\.env.local`}} {
		f.Add(c[0], c[1])
	}
	var plain func(glob, file []string) bool
	plain = func(glob, file []string) bool {
		for len(glob) > 0 {
			if glob[0] == "**" {
				for i := 0; i <= len(file); i++ {
					if plain(glob[1:], file[i:]) {
						return true
					}
				}
				return false
			}
			if len(file) == 0 {
				return false
			}
			if ok, err := path.Match(glob[0], file[0]); !ok || err != nil {
				return false
			}
			glob, file = glob[1:], file[1:]
		}
		return len(file) == 0
	}
	f.Fuzz(func(t *testing.T, glob, file string) {
		f := pathForMatch(file)
		g := strings.ToLower(glob)
		want, err := path.Match(g, f.base)
		want = want && err == nil
		if strings.Contains(g, "/") {
			want = plain(strings.Split(g, "/"), f.segments)
		}
		if got := f.match(glob); got != want {
			t.Fatalf("glob %q, file %q: matched %t, the plain matcher %t", glob, file, got, want)
		}
	})
}

// TestSanitizeSeenSecretsAcrossCuts: a secret seen in one value is hidden in another
// that a bound cut: whole, or its start where the cut went through it, and escaped in
// a container kept as its JSON text; the cut's own mark is left as it is.
func TestSanitizeSeenSecretsAcrossCuts(t *testing.T) {
	p := defaultPolicy()
	p.MaxValue = 100
	secret := "Zq8vLm3pRt6WxAbCdEf"
	cut := sanitized(t, p, `{"tool_name":"Bash","arguments":{"command":"export DB_PASSWORD=`+secret+`"},"result":"`+strings.Repeat("o", 90)+secret+` and a tail past the bound"}`)
	if got := cut.ResultText(); strings.Contains(got, "Zq8vLm3") || !strings.HasSuffix(got, "[REDACTED:secret-assignment]\n[TRUNCATED: 135 bytes]") {
		t.Errorf("a result cut through a secret seen in the arguments: %q", got)
	}
	fake := sanitized(t, p, `{"tool_name":"Bash","arguments":{"password":"`+secret+`"},"result":"a result long enough, then\n[TRUNCATED: `+secret+` bytes]"}`)
	if all, _ := json.Marshal(fake); strings.Contains(string(all), "Zq8vLm3") {
		t.Errorf("a secret in what looks like a cut's mark: %s", all)
	}
	key := sanitized(t, p, `{"tool_name":"x","arguments":{"password":"`+secret+`","`+secret+`":"`+strings.Repeat("v", 150)+`"},"result":"a result long enough to be kept whole, past the fifty characters"}`)
	if all, _ := json.Marshal(key); strings.Contains(string(all), "Zq8vLm3") {
		t.Errorf("a secret as the name of a member cut short: %s", all)
	}
	past := sanitized(t, p, `{"tool_name":"x","arguments":{"text":"note `+secret+`"},"result":"`+strings.Repeat("o", 200)+` DB_PASSWORD=`+secret+` tail"}`)
	if all, _ := json.Marshal(past); strings.Contains(string(all), "Zq8vLm3") {
		t.Errorf("a secret a rule found past a cut, held whole elsewhere: %s", all)
	}
	quoted := `Zq8\"vLm3pRt6Wx`
	kept := sanitized(t, p, `{"tool_name":"x","arguments":{"password":"`+quoted+`"},"result":{"out":"`+quoted+`","more":["`+strings.Repeat("m", 120)+`"]}}`)
	if all, _ := json.Marshal(kept); strings.Contains(string(all), "vLm3pRt6Wx") {
		t.Errorf("a secret with a quote, in a result kept as its JSON text: %s", all)
	}
}
