package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/diff"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// ana is the recorder the golden files hold: a repo path that needs quoting.
var ana = Recorder{Binary: "/usr/local/bin/agmem", Repo: "/home/ana/ana's memory"}

const self = "/usr/local/bin/agmem"

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./hooks -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test ./hooks -update rewrites it):\n%s", name, diff.Diff("want", want, "got", got))
	}
}

// agent is the agent called name.
func agent(t *testing.T, name string) Agent {
	t.Helper()
	for _, a := range Agents {
		if a.Name == name {
			return a
		}
	}
	t.Fatalf("no agent %q", name)
	return Agent{}
}

// readInput reads testdata/<agent>-<input>.json; "missing" is no file at all.
func readInput(t *testing.T, agent, input string) []byte {
	if input == "missing" {
		return nil
	}
	src, err := os.ReadFile(filepath.Join("testdata", agent+"-"+input+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// checkParses asserts the text is what the agent can read: JSON (with comments where it
// allows them) with an object at the top.
func checkParses(t *testing.T, a Agent, text []byte) map[string]any {
	t.Helper()
	plain := text
	if a.Comments {
		plain = blankComments(text)
	}
	var v map[string]any
	if err := json.Unmarshal(plain, &v); err != nil {
		t.Fatalf("the result does not parse: %v\n%s", err, text)
	}
	return v
}

// TestInstallAndUninstallGolden installs agmem's hooks for each agent into a missing
// file, a file with other settings and other hooks, and a file holding stale agmem hooks
// (an old binary, a moved repo, doubled, one mixed into someone else's group), and checks
// the results against golden files; then that installing again changes nothing, that
// every event is covered, and that uninstalling gives back the file as it was.
func TestInstallAndUninstallGolden(t *testing.T) {
	for _, a := range Agents {
		for _, input := range []string{"missing", "others", "stale"} {
			t.Run(a.Name+"-"+input, func(t *testing.T) {
				src := readInput(t, a.Name, input)
				got, ch, err := a.Install(src, ana, self)
				if err != nil {
					t.Fatal(err)
				}
				checkGolden(t, a.Name+"-"+input+".install.golden", got)
				checkParses(t, a, got)
				if input != "stale" && len(ch.Added) != len(a.Events) {
					t.Errorf("install reported %+v, want each of the %d events added", ch, len(a.Events))
				}

				again, ch, err := a.Install(got, ana, self)
				if err != nil || !bytes.Equal(again, got) || ch.String() != "" {
					t.Errorf("a second install changed the file (%+v, %v):\n%s", ch, err, diff.Diff("first", got, "second", again))
				}
				found, err := a.Inspect(got, self)
				want := ana
				want.Agent = a.Name
				if err != nil || len(found.Missing) != 0 || !reflect.DeepEqual(found.Recorders, []Recorder{want}) {
					t.Errorf("after install, Inspect = %+v, %v; want every event, recording into %s", found, err, ana.Repo)
				}

				removed, ch, err := a.Uninstall(got, self)
				if err != nil {
					t.Fatal(err)
				}
				checkParses(t, a, removed)
				if found, _ := a.Inspect(removed, self); len(found.Events) != 0 {
					t.Errorf("after uninstall agmem's hooks are still in %v", found.Events)
				}
				switch input {
				case "others":
					if !bytes.Equal(removed, src) {
						t.Errorf("uninstall did not give back the file as it was:\n%s", diff.Diff("before install", src, "after uninstall", removed))
					}
				case "stale":
					stale, _, err := a.Uninstall(src, self)
					if err != nil {
						t.Fatal(err)
					}
					checkGolden(t, a.Name+"-stale.uninstall.golden", stale)
				}
			})
		}
	}
}

// TestInstallKeepsTheFileStyle checks that inserted text follows the file: one line stays
// one line, tabs and CRLF line ends are kept, and untouched bytes are not re-encoded.
func TestInstallKeepsTheFileStyle(t *testing.T) {
	claude := agent(t, "claude")
	for _, tc := range []struct{ name, src, want string }{
		{"one line", `{"model":"opus"}`, `{"model":"opus","hooks":{"PostToolUse":[{"matcher":"*","hooks":[{"type":"command",`},
		{"one spaced line", `{"model": "opus"}`, `{"model": "opus", "hooks": {"PostToolUse": [{"matcher": "*", "hooks": [{"type": "command",`},
		{"tabs", "{\n\t\"model\": \"opus\"\n}\n", "{\n\t\"model\": \"opus\",\n\t\"hooks\": {\n\t\t\"PostToolUse\": [\n\t\t\t{\n"},
		{"crlf", "{\r\n  \"model\": \"opus\"\r\n}\r\n", "{\r\n  \"model\": \"opus\",\r\n  \"hooks\": {\r\n"},
		{"escapes kept", `{"a": "\u00e9\/", "n": 1.50e3}`, `{"a": "\u00e9\/", "n": 1.50e3, "hooks": {"PostToolUse": [`},
		{"empty file", "", "{\n  \"hooks\": {\n    \"PostToolUse\": [\n"},
		{"only space", " \n", "{\n  \"hooks\": {\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := claude.Install([]byte(tc.src), ana, self)
			if err != nil {
				t.Fatal(err)
			}
			checkParses(t, claude, got)
			if tc.name == "crlf" && bytes.Contains(bytes.ReplaceAll(got, []byte("\r\n"), nil), []byte("\n")) {
				t.Errorf("a bare LF in a CRLF file:\n%q", got)
			}
			if !strings.HasPrefix(string(got), tc.want) {
				t.Errorf("got\n%s\nwant it to hold\n%s", got, tc.want)
			}
		})
	}
}

// TestCommentsSurvive checks that taking agmem's hooks out of Gemini CLI's settings (by
// uninstalling, or by installing over stale or mixed entries) removes the entry, its comma
// and the space around it, and no comment: not one beside the entry, not one inside a
// list it empties, not one in a file that held nothing else.
func TestCommentsSurvive(t *testing.T) {
	gemini := agent(t, "gemini")
	for _, tc := range []struct{ name, src, want string }{
		{"beside the entries", `{
  "hooks": {
    "AfterTool": [
      {"matcher": "*", "hooks": [{"name": "lint", "type": "command", "command": "my-linter"}]}, // my linter, keep me
      {"matcher": "*", "hooks": [{"name": "agmem", "type": "command", "command": "agmem record"}]}
    ],
    "BeforeAgent": [
      {"hooks": [{"name": "agmem", "type": "command", "command": "agmem record"}]}, // agmem: added by hand
      /* the team's prompt logger */ {"hooks": [{"command": "log-prompt"}]}
    ]
  }
}
`, `{
  "hooks": {
    "AfterTool": [
      {"matcher": "*", "hooks": [{"name": "lint", "type": "command", "command": "my-linter"}]} // my linter, keep me
    ],
    "BeforeAgent": [
      // agmem: added by hand
      /* the team's prompt logger */ {"hooks": [{"command": "log-prompt"}]}
    ]
  }
}
`},
		{"the last entry after a line comment", "{\"hooks\": {\"AfterTool\": [{\"command\": \"x\"}, // x\n{\"hooks\": [{\"command\": \"agmem record\"}]}]}}",
			"{\"hooks\": {\"AfterTool\": [{\"command\": \"x\"} // x\n]}}"},
		{"a list it empties", `{
  "hooks": {
    "AfterTool": [
      // agmem, for memory
      {"hooks": [{"command": "agmem record"}]}
    ]
  }
}
`, `{
  "hooks": {
    "AfterTool": [
      // agmem, for memory
    ]
  }
}
`},
		{"between the key and the list", "{\"hooks\": {\"AfterTool\" /* all tools */: [{\"hooks\": [{\"command\": \"agmem record\"}]}]}}",
			"{\"hooks\": {\"AfterTool\" /* all tools */: []}}"},
		{"in the hooks object", "{\"hooks\": { // ours\n\"AfterTool\": [{\"hooks\": [{\"command\": \"agmem record\"}]}]}}",
			"{\"hooks\": { // ours\n}}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := gemini.Uninstall([]byte(tc.src), self)
			if err != nil {
				t.Fatal(err)
			}
			checkParses(t, gemini, got)
			if string(got) != tc.want {
				t.Errorf("uninstall gave\n%s\nwant\n%s", got, tc.want)
			}
		})
	}

	// installing over a stale entry mixed with the user's own hook
	src := "{\n  \"hooks\": {\"AfterTool\": [{\"hooks\": [\n    {\"command\": \"agmem record\"}, // old\n    /* mine */ {\"command\": \"./log.sh\"}\n  ]}]}\n}\n"
	got, _, err := gemini.Install([]byte(src), ana, self)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"// old", "/* mine */"} {
		if !strings.Contains(string(got), c) {
			t.Errorf("install took out the comment %q:\n%s", c, got)
		}
	}

	// a file of comments only keeps them, before the settings agmem writes
	only := "// Ana's Gemini settings: nothing yet"
	got, _, err = gemini.Install([]byte(only), ana, self)
	if err != nil {
		t.Fatal(err)
	}
	checkParses(t, gemini, got)
	if !strings.HasPrefix(string(got), only+"\n{\n") {
		t.Errorf("install over a file of comments gave\n%s", got)
	}
	removed, _, err := gemini.Uninstall(got, self)
	if err != nil || !strings.HasPrefix(string(removed), only+"\n") {
		t.Errorf("uninstall gave %v\n%s", err, removed)
	}
}

// TestUnreadableFilesAreRefused checks that a file agmem cannot read as the agent's
// settings is refused by install, uninstall and inspect alike.
func TestUnreadableFilesAreRefused(t *testing.T) {
	for _, tc := range []struct{ agent, src, why string }{
		{"claude", `{"hooks": {`, "line 1: unexpected end of JSON input"},
		{"claude", "{\n  \"a\": 1,\n}\n", "line 3: invalid character '}'"},
		{"claude", `[1, 2]`, "the top level is not a JSON object"},
		{"claude", `{"hooks": []}`, `its "hooks" is not an object`},
		{"claude", `{"hooks": {"Stop": {}}}`, `its "hooks"."Stop" is not a list`},
		{"claude", `{"a": 1} // a comment`, "invalid character '/'"},
		{"gemini", `{"a": 1 /* unclosed`, "invalid character '/'"},
		{"cursor", `{"version": 2, "hooks": {}}`, `its "version" is 2; agmem knows version 1`},
	} {
		a := agent(t, tc.agent)
		_, _, err1 := a.Install([]byte(tc.src), ana, self)
		_, _, err2 := a.Uninstall([]byte(tc.src), self)
		_, err3 := a.Inspect([]byte(tc.src), self)
		for _, err := range []error{err1, err2, err3} {
			if !errors.Is(err, ErrUnreadable) || !strings.Contains(err.Error(), tc.why) {
				t.Errorf("%s %q: got %v, want %q", tc.agent, tc.src, err, tc.why)
			}
		}
	}
}

// TestRecorderOf checks which commands are agmem's: an agmem binary recording, however
// it is quoted; not another program, nor agmem doing something else or in a pipeline.
func TestRecorderOf(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want Recorder
		ok   bool
	}{
		{ana.Command(), ana, true},
		{"agmem record", Recorder{Binary: "agmem"}, true},
		{"agmem record --repo /m 1> /dev/null", Recorder{Binary: "agmem", Repo: "/m"}, true},
		{"agmem record >/dev/null 2>&1", Recorder{Binary: "agmem"}, true},
		{"agmem record --repo /m 2>/dev/null", Recorder{Binary: "agmem", Repo: "/m"}, true},
		{"agmem record --repo /m 2>&1 >/dev/null", Recorder{Binary: "agmem", Repo: "/m"}, true},
		{"agmem record --repo /m >>/dev/null 2>>/dev/null ", Recorder{Binary: "agmem", Repo: "/m"}, true},
		{"agmem record --repo /m &>/dev/null", Recorder{Binary: "agmem", Repo: "/m"}, true},
		{ana.Command() + " 2>/dev/null", ana, true},
		{"agmem record --repo /m2>/dev/null", Recorder{Binary: "agmem", Repo: "/m2"}, true}, // the 2 is the path's
		{"agmem record --repo /m\\ 2>&1", Recorder{}, false},                                // an escaped blank: one word
		{"agmem record >/tmp/log", Recorder{}, false},
		{"agmem record 2>/tmp/errors", Recorder{}, false},
		{"agmem record </dev/null", Recorder{}, false},
		{"agmem record >/dev/null 3>&1", Recorder{}, false},
		{"agmem --repo /m record", Recorder{Binary: "agmem", Repo: "/m"}, true},
		{`"/opt/my tools/agmem" record --repo=/m`, Recorder{Binary: "/opt/my tools/agmem", Repo: "/m"}, true},
		{`/opt/my\ tools/agmem.exe record`, Recorder{Binary: "/opt/my tools/agmem.exe"}, true},
		{"/home/ana/bin/agmem-dev record --repo /m", Recorder{Binary: "/home/ana/bin/agmem-dev", Repo: "/m"}, true}, // self
		{"/usr/local/bin/agmem-record --repo /m >/dev/null", Recorder{Binary: "/usr/local/bin/agmem-record", Repo: "/m"}, true},
		{"agmem-record", Recorder{Binary: "agmem-record"}, true},
		{"agmem-record --agent codex --repo /m >/dev/null", Recorder{Binary: "agmem-record", Repo: "/m", Agent: "codex"}, true},
		{"agmem record --agent=gemini", Recorder{Binary: "agmem", Agent: "gemini"}, true},
		{"agmem-record --agent", Recorder{}, false},
		{"agmem-record record --repo /m", Recorder{}, false}, // it takes no command
		{"agmem-record --jsonl", Recorder{}, false},
		{"agmem flush", Recorder{}, false},
		{"agmem record --verbose", Recorder{}, false},
		{"agmem record | tee log", Recorder{}, false},
		{"agmem record --repo $HOME/m", Recorder{}, false},
		{"agmem record; rm -rf /", Recorder{}, false},
		{"notagmem record", Recorder{}, false},
		{"agmem", Recorder{}, false},
		{"'agmem record", Recorder{}, false},
	} {
		got, ok := recorderOf(tc.cmd, "/home/ana/bin/agmem-dev")
		if ok != tc.ok || got != tc.want {
			t.Errorf("recorderOf(%q) = %+v, %v; want %+v, %v", tc.cmd, got, ok, tc.want, tc.ok)
		}
	}
}

// TestInstallUpdatesHandEditedHooks checks that agmem's hook with its redirections
// changed by hand is still known as agmem's: installing updates it in place rather than
// adding a second hook, which would record every event twice.
func TestInstallUpdatesHandEditedHooks(t *testing.T) {
	claude := agent(t, "claude")
	for _, redirect := range []string{"2>/dev/null", ">/dev/null 2>&1", "2>&1 >/dev/null", "&>/dev/null", ""} {
		src := `{"hooks": {"PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "agmem record --repo /m ` + redirect + `"}]}]}}`
		got, ch, err := claude.Install([]byte(src), ana, self)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(ch.Updated, "PostToolUse") || slices.Contains(ch.Added, "PostToolUse") {
			t.Errorf("%q: install reported %+v, want PostToolUse updated", redirect, ch)
		}
		var v struct{ Hooks map[string][]group }
		if err := json.Unmarshal(got, &v); err != nil {
			t.Fatal(err)
		}
		want := ana
		want.Agent = "claude"
		if list := v.Hooks["PostToolUse"]; len(list) != 1 || len(list[0].Hooks) != 1 || list[0].Hooks[0].Command != want.Command() {
			t.Errorf("%q: PostToolUse is now %+v, want agmem's one hook, updated", redirect, list)
		}
	}
}

// TestCommandQuoting runs the hook command's words through a real sh: whatever the paths
// hold, sh hands agmem, or agmem-record, exactly them.
func TestCommandQuoting(t *testing.T) {
	paths := []string{"/a b/c", `/it's "quoted"`, "/$HOME/`id`/*", "/tab\there/new\nline", `/back\slash`, "/'"}
	for _, bin := range []string{"agmem", "/it's/agmem-record"} {
		for _, path := range paths {
			r := Recorder{Binary: bin, Repo: path}
			cmd := strings.TrimSuffix(r.Command(), " >/dev/null")
			out, err := exec.Command("sh", "-c", `printf '%s\0' `+cmd).Output()
			if err != nil {
				t.Fatal(err)
			}
			want := []string{bin, "record", "--repo", path}
			if bin != "agmem" {
				want = []string{bin, "--repo", path}
			}
			if got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00"); !reflect.DeepEqual(got, want) {
				t.Errorf("sh read %q as %q", r.Command(), got)
			}
			if back, ok := recorderOf(r.Command(), ""); !ok || back != r {
				t.Errorf("recorderOf(%q) = %+v, %v", r.Command(), back, ok)
			}
		}
	}
}

// TestSwitch turns Codex's hooks switch on in the config.toml files people have, leaving
// every other line alone, and refuses what it cannot edit without changing its meaning.
func TestSwitch(t *testing.T) {
	codex := agent(t, "codex")
	sw := *codex.Switch
	for _, tc := range []struct{ name, src, state, want, err string }{
		{"no file", "", SwitchUnset, "[features]\nhooks = true\n", ""},
		{"other settings", "model = \"o3\"\n\n[mcp_servers.docs]\ncommand = \"docs\"\n",
			SwitchUnset, "model = \"o3\"\n\n[mcp_servers.docs]\ncommand = \"docs\"\n\n[features]\nhooks = true\n", ""},
		{"no final newline", "model = \"o3\"", SwitchUnset, "model = \"o3\"\n\n[features]\nhooks = true\n", ""},
		{"features table", "# mine\n[features] # experiments\nweb_search = true\n\n[tui]\nx = 1\n",
			SwitchUnset, "# mine\n[features] # experiments\nhooks = true\nweb_search = true\n\n[tui]\nx = 1\n", ""},
		{"features last, no newline", "[features]", SwitchUnset, "[features]\nhooks = true\n", ""},
		{"crlf", "[features]\r\nweb_search = true\r\n", SwitchUnset, "[features]\r\nhooks = true\r\nweb_search = true\r\n", ""},
		{"on", "[features]\nhooks = true\n", SwitchOn, "", ""},
		{"on by its deprecated name", "[features]\ncodex_hooks = true\n", SwitchOn, "", ""},
		{"off", "[features]\nhooks = false\n", SwitchOff, "", ""},
		{"off by its deprecated name", "[features]\nhooks = true\ncodex_hooks = false\n", SwitchOff, "", ""},
		{"inline table", "features = { web_search = true }\n", SwitchUnset, "", "without changing how the rest reads"},
		{"header in a string", "notes = '''\n[features]\n'''\n", SwitchUnset, "", "without changing how the rest reads"},
		{"not toml", "[features\n", "", "", "cannot edit"},
		{"not a boolean", "[features]\nhooks = \"yes\"\n", "", "", "not true or false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state, err := sw.State([]byte(tc.src))
			if state != tc.state || (err != nil) != (tc.state == "") {
				t.Fatalf("State = %q, %v; want %q", state, err, tc.state)
			}
			if state != SwitchUnset {
				return
			}
			got, err := sw.Enable([]byte(tc.src))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Enable = %q, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("Enable = %v\n%s\nwant\n%s", err, got, tc.want)
			}
			if state, _ := sw.State(got); state != SwitchOn {
				t.Errorf("after Enable the switch is %s", state)
			}
		})
	}
}

// TestSwitchRenamesDeprecated renames the setting Codex 0.171 calls deprecated to the
// current one, its value and comment kept, and refuses where that would change how the
// rest reads.
func TestSwitchRenamesDeprecated(t *testing.T) {
	sw := *agent(t, "codex").Switch
	for _, tc := range []struct{ name, src, want, err string }{
		{"on", "[features]\ncodex_hooks = true # mine\nx = 1\n", "[features]\nhooks = true # mine\nx = 1\n", ""},
		{"off", "model = 1\n[ features ]\n  codex_hooks=false\n", "model = 1\n[ features ]\n  hooks=false\n", ""},
		{"both", "[features]\ncodex_hooks = true\nhooks = true\n", "[features]\ncodex_hooks = true\nhooks = true\n", ""},
		{"none", "[features]\nx = 1\n", "[features]\nx = 1\n", ""},
		{"another table's key", "[tui]\ncodex_hooks = 1\n", "[tui]\ncodex_hooks = 1\n", ""},
		{"dotted", "features.codex_hooks = true\n", "", "without changing how the rest reads"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := sw.renameDeprecated([]byte(tc.src))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("renameDeprecated = %q, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("renameDeprecated = %v\n%s\nwant\n%s", err, got, tc.want)
			}
		})
	}
}

// TestGeminiSwitch reads Gemini CLI's hooks switch under each name it has had and turns
// it on where it is unset, in the settings file its hooks are in, keeping every other
// byte; a false under any name is left alone and named.
func TestGeminiSwitch(t *testing.T) {
	sw := *agent(t, "gemini").Switch
	for _, tc := range []struct{ name, src, state, setting, want, err string }{
		{"no file", "", SwitchUnset, "hooksConfig.enabled", "{\n  \"hooksConfig\": {\n    \"enabled\": true\n  }\n}\n", ""},
		{"other settings", `{"theme": "GitHub"}`, SwitchUnset, "hooksConfig.enabled", `{"theme": "GitHub", "hooksConfig": {"enabled": true}}`, ""},
		{"its object, with a comment", "{\n  \"hooksConfig\": {\"notifications\": false} // quiet\n}\n", SwitchUnset, "hooksConfig.enabled",
			"{\n  \"hooksConfig\": {\"notifications\": false, \"enabled\": true} // quiet\n}\n", ""},
		{"an old name that is no object now", `{"tools": 1, "hooks": {"enabled": ["x"]}}`, SwitchUnset, "hooksConfig.enabled",
			`{"tools": 1, "hooks": {"enabled": ["x"]}, "hooksConfig": {"enabled": true}}`, ""},
		{"on", `{"hooksConfig": {"enabled": true}}`, SwitchOn, "hooksConfig.enabled", "", ""},
		{"on by its first name", `{"tools": {"enableHooks": true}}`, SwitchOn, "hooksConfig.enabled", "", ""},
		{"off", `{"hooksConfig": {/* for now */ "enabled": false}}`, SwitchOff, "hooksConfig.enabled", "", ""},
		{"off by its first name", `{"hooksConfig": {"enabled": true}, "tools": {"enableHooks": false}}`, SwitchOff, "tools.enableHooks", "", ""},
		{"off by its January name", `{"hooks": {"enabled": false}}`, SwitchOff, "hooks.enabled", "", ""},
		{"not an object", `{"hooksConfig": true}`, "", "", "", `its "hooksConfig" is not an object`},
		{"not a boolean", `{"hooksConfig": {"enabled": "yes"}}`, "", "", "", `its hooksConfig.enabled is "yes", not true or false`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state, setting, err := sw.read([]byte(tc.src))
			if tc.err != "" {
				if !errors.Is(err, ErrUnreadable) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("read = %q, %v; want an error with %q", state, err, tc.err)
				}
				return
			}
			if err != nil || state != tc.state || setting != tc.setting {
				t.Fatalf("read = %q, %q, %v; want %q, %q", state, setting, err, tc.state, tc.setting)
			}
			if state != SwitchUnset {
				return
			}
			got, err := sw.Enable([]byte(tc.src))
			if err != nil || string(got) != tc.want {
				t.Fatalf("Enable = %v\n%s\nwant\n%s", err, got, tc.want)
			}
			if state, _ := sw.State(got); state != SwitchOn {
				t.Errorf("after Enable the switch is %s", state)
			}
		})
	}
}

// TestWrite checks the file side: a backup of the first version agmem changes, kept
// through later changes; the file's permissions; a symbolic link followed, not replaced;
// and nothing written when the file changed since it was read.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "settings.json")
	link := filepath.Join(dir, "settings.json")
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte("v1"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	backup, err := Edit{Path: link, Old: []byte("v1"), New: []byte("v2")}.Write()
	if err != nil || backup != link+BackupSuffix {
		t.Fatalf("first write: backup %q, %v", backup, err)
	}
	if backup, err = (Edit{Path: link, Old: []byte("v2"), New: []byte("v3")}).Write(); err != nil || backup != "" {
		t.Fatalf("second write: backup %q, %v; want none made", backup, err)
	}
	for path, want := range map[string]string{real: "v3", link + BackupSuffix: "v1"} {
		got, _ := os.ReadFile(path)
		fi, _ := os.Stat(path)
		if string(got) != want || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %q, %v; want %q, -rw-------", path, got, fi.Mode(), want)
		}
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the symbolic link was replaced by a file")
	}
	if _, err := (Edit{Path: link, Old: []byte("v2"), New: []byte("v4")}).Write(); err == nil {
		t.Error("a file that changed since it was read was written over")
	}
	fresh := filepath.Join(dir, "new", ".claude", "settings.json")
	if _, err := (Edit{Path: fresh, New: []byte("{}\n")}).Write(); err != nil {
		t.Fatal(err)
	}
	if _, err := (Edit{Path: fresh, New: []byte("{}\n")}).Write(); err == nil {
		t.Error("a file made since agmem looked was written over")
	}
	// A link to a file that is not there is left as it is: agmem cannot tell where the
	// file belongs.
	dangling := filepath.Join(dir, "dangling.json")
	if err := os.Symlink(filepath.Join(dir, "gone", "x.json"), dangling); err != nil {
		t.Fatal(err)
	}
	if _, err := (Edit{Path: dangling, New: []byte("{}\n")}).Write(); err == nil || !strings.Contains(err.Error(), "is a link to") {
		t.Errorf("a link to nothing: %v", err)
	}
	if fi, err := os.Lstat(dangling); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link to nothing was replaced")
	}
}
