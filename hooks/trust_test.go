package hooks

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// codexTrusted are the hashes Codex 0.171 keeps for agmem's hooks of
// testdata/codex-missing.install.golden once a person trusted them, as Codex computes
// them (a reference implementation checked against Codex's own hooks/list and what its
// interface wrote).
var codexTrusted = map[string]string{
	"post_tool_use":      "sha256:c64a3d3ad6421bd177a3fc60aac1c9e787c4d8126b34197b985189690fef21d9",
	"pre_tool_use":       "sha256:22d96b4495fa405080699cb0e6b896fb40522015c78585872fdad94bc86750eb",
	"session_start":      "sha256:8f6cde708507670f277ab58c951b4f707003129cfcdf0cd5d2a60dac3b549e24",
	"user_prompt_submit": "sha256:82680d0bc9f480c07a27d42c2f531b8087e2e59b99b6eaac1605bb1f4246127b",
	"stop":               "sha256:75656008b9601c220c144c6bebdd28ddc35c11752cdd5bde717a27350bd5196d",
	"session_end":        "sha256:1c671478a4d25bdccd9a761739a712f4b5932cfdf8ffc57371fa3e1d0d5f14e2",
}

// TestCodexTrust reads which of agmem's hooks Codex runs from the config it keeps what
// a person trusted in: all, once each is trusted with its hash; none that was never
// trusted, that changed since, or that is switched off; none of a project not trusted.
func TestCodexTrust(t *testing.T) {
	codex := agent(t, "codex")
	src, err := os.ReadFile(filepath.Join("testdata", "codex-missing.install.golden"))
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	if err := os.Mkdir(filepath.Join(home, ".codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	place := Place{Home: home, Project: filepath.Join(home, "shop"), Getenv: func(string) string { return "" }}
	all := []string{"PostToolUse", "PreToolUse", "SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"}
	state := func(scope Scope, hash func(event string) string, extra string) string {
		var b strings.Builder
		for event, h := range codexTrusted {
			if hash != nil {
				h = hash(event)
			}
			if h != "" {
				b.WriteString("[hooks.state.\"" + codex.Path(place, scope) + ":" + event + ":0:0\"]\ntrusted_hash = \"" + h + "\"\n")
			}
		}
		return b.String() + extra
	}
	for _, tc := range []struct {
		name   string
		scope  Scope
		config string
		want   Trust
	}{
		{"all trusted", User, state(User, nil, ""), Trust{Trusted: all}},
		{"no config", User, "", Trust{Untrusted: all}},
		{"one changed, one never trusted", User, state(User, func(e string) string {
			switch e {
			case "stop":
				return "sha256:0000"
			case "session_end":
				return ""
			}
			return codexTrusted[e]
		}, ""), Trust{Trusted: []string{"PostToolUse", "PreToolUse", "SessionStart", "UserPromptSubmit"}, Changed: []string{"Stop"}, Untrusted: []string{"SessionEnd"}}},
		{"one switched off", User, strings.Replace(state(User, nil, ""), codexTrusted["pre_tool_use"]+"\"\n", codexTrusted["pre_tool_use"]+"\"\nenabled = false\n", 1),
			Trust{Trusted: []string{"PostToolUse", "SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"}, Disabled: []string{"PreToolUse"}}},
		{"a project's, the project not trusted", Project, state(Project, nil, ""), Trust{Trusted: all, Project: place.Project}},
		{"a project's, the project trusted", Project, state(Project, nil, "[projects.\""+place.Project+"\"]\ntrust_level = \"trusted\"\n"), Trust{Trusted: all}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.config != "" {
				if err := os.WriteFile(codex.trustConfig(place), []byte(tc.config), 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				os.Remove(codex.trustConfig(place))
			}
			got := codex.trustOf(place, tc.scope, src, self)
			tc.want.Config = codex.trustConfig(place)
			sortLike := func(list []string) []string { // in the file's order
				var out []string
				for _, e := range all {
					for _, x := range list {
						if x == e {
							out = append(out, e)
						}
					}
				}
				return out
			}
			got.Trusted = sortLike(got.Trusted)
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("trust = %+v\nwant    %+v", *got, tc.want)
			}
			if got.Runs() != (len(tc.want.Trusted) == len(all) && tc.want.Project == "") {
				t.Errorf("Runs() = %v for %+v", got.Runs(), *got)
			}
		})
	}
}

// TestCodexDeprecatedSwitchLeftWithAWarning installs into a config.toml whose deprecated
// switch agmem cannot rename as written (a dotted key): the install goes on, the file
// stays as it is, and a warning says to rename it.
func TestCodexDeprecatedSwitchLeftWithAWarning(t *testing.T) {
	codex := agent(t, "codex")
	home := t.TempDir()
	if err := os.Mkdir(filepath.Join(home, ".codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	config := []byte("model = \"o3\"\nfeatures.codex_hooks = true\n")
	if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), config, 0o644); err != nil {
		t.Fatal(err)
	}
	place := Place{Home: home, Project: home, Getenv: func(string) string { return "" }}
	plan, err := codex.PlanInstall(place, User, ana, self)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Warnings) != 1 || !strings.Contains(plan.Warnings[0], "rename it [features] hooks by hand") {
		t.Errorf("warnings %q, want one saying to rename the switch", plan.Warnings)
	}
	for _, ed := range plan.Edits {
		if strings.HasSuffix(ed.Path, "config.toml") && string(ed.New) != string(config) {
			t.Errorf("config.toml would become %q, want it as it was", ed.New)
		}
	}
}

// TestDisabled reads Gemini CLI's list of hooks switched off by name.
func TestDisabled(t *testing.T) {
	gemini := agent(t, "gemini")
	for src, want := range map[string]bool{
		`{"hooksConfig": {"disabled": ["other", "agmem"]} // by /hooks disable agmem` + "\n}": true,
		`{"hooksConfig": {"disabled": ["other"]}}`:                                            false,
		`{"hooksConfig": {"enabled": true}}`:                                                  false,
		`{"hooksConfig": {"disabled": "agmem"}}`:                                              false,
		`not json`:                                                                            false,
	} {
		if got := gemini.Disabled([]byte(src)); got != want {
			t.Errorf("Disabled(%s) = %v, want %v", src, got, want)
		}
	}
	if agent(t, "claude").Disabled([]byte(`{"hooksConfig": {"disabled": ["agmem"]}}`)) {
		t.Error("Claude Code has no hooks named agmem to disable")
	}
}
