package hooks

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/BurntSushi/toml"
)

// Codex (0.171) runs a hook only once a person has trusted it, in its interactive
// interface ("Hooks need review": "Trust all and continue", or /hooks), and says nothing
// of the hooks it does not run. It keeps what was trusted in the user's config.toml
// alone, one table per hook:
//
//	[hooks.state."<hooks.json, absolute>:<event, snake_case>:<group>:<hook>"]
//	trusted_hash = "sha256:<hex>"
//	enabled = false   # optional: off, trusted or not
//
// the hash being of the hook as Codex reads it (trustHash). A project's hooks also need
// the project trusted: [projects."<dir>"] trust_level = "trusted". agmem reads this to
// say which of its hooks Codex will not run; it never writes it, which would pass over
// the review Codex asks of a person.

// Trust is the state of agmem's hooks of one file before the agent's own gate.
type Trust struct {
	Config    string   `json:"config"`              // the file that keeps what was trusted
	Trusted   []string `json:"trusted"`             // events whose agmem hook the agent runs
	Untrusted []string `json:"untrusted,omitempty"` // never trusted
	Changed   []string `json:"changed,omitempty"`   // trusted once, changed since (a new path, a new timeout)
	Disabled  []string `json:"disabled,omitempty"`  // switched off in the agent's config
	// Project is the project directory the agent must trust first, when it does not.
	Project string `json:"project_untrusted,omitempty"`
	Error   string `json:"error,omitempty"` // why the config could not be read
}

// Runs says whether the agent runs all of agmem's hooks of the file.
func (t *Trust) Runs() bool {
	return t.Error == "" && t.Project == "" && len(t.Untrusted)+len(t.Changed)+len(t.Disabled) == 0
}

// codexHookState is a hook's table under [hooks.state].
type codexHookState struct {
	TrustedHash string `toml:"trusted_hash"`
	Enabled     *bool  `toml:"enabled"`
}

type codexConfig struct {
	Hooks struct {
		State map[string]codexHookState `toml:"state"`
	} `toml:"hooks"`
	Projects map[string]struct {
		TrustLevel string `toml:"trust_level"`
	} `toml:"projects"`
}

// trust reads, for the hooks file at path (src), whether Codex runs each agmem hook in
// it, by the config at config (its bytes, nil when there is none); project is the
// directory a project's hooks are of, "" for the user's.
func (s *settings) trust(path string, config []byte, configPath, project string) *Trust {
	t := &Trust{Config: configPath, Trusted: []string{}}
	var cfg codexConfig
	if err := toml.Unmarshal(config, &cfg); err != nil {
		t.Error = fmt.Sprintf("%s: %v", configPath, err)
		return t
	}
	if project != "" && !projectTrusted(cfg, project) {
		t.Project = project
	}
	h := s.hooksObject()
	if h == nil {
		return t
	}
	for _, m := range h.members {
		if live, _ := h.get(m.key); live != m.value || m.value.kind != '[' {
			continue
		}
		for g, entry := range m.value.elems {
			found, _, _ := s.ours(entry)
			for _, i := range found {
				state, ok := cfg.Hooks.State[fmt.Sprintf("%s:%s:%d:%d", path, snakeCase(m.key), g, i)]
				hash, err := s.trustHash(m.key, entry, i)
				switch {
				case err != nil:
					t.Error = err.Error()
				case ok && state.Enabled != nil && !*state.Enabled:
					t.Disabled = appendOnce(t.Disabled, m.key)
				case !ok || state.TrustedHash == "":
					t.Untrusted = appendOnce(t.Untrusted, m.key)
				case state.TrustedHash != hash:
					t.Changed = appendOnce(t.Changed, m.key)
				default:
					t.Trusted = appendOnce(t.Trusted, m.key)
				}
			}
		}
	}
	return t
}

// trustHash is what Codex trusts a hook by: "sha256:" and the hex SHA-256 of the compact
// JSON, keys sorted, nothing HTML-escaped, of {"event_name", "hooks": [the hook],
// "matcher"}, with the hook's timeout as Codex takes it (600 s when unset, at least 1;
// SessionEnd's 1 when unset and at most 3) and its matcher left out where Codex ignores
// one (UserPromptSubmit, Stop) or none is given.
func (s *settings) trustHash(event string, group *node, i int) (string, error) {
	var g struct {
		Matcher *string `json:"matcher"`
		Hooks   []struct {
			Type          string  `json:"type"`
			Command       string  `json:"command"`
			Timeout       *int    `json:"timeout"`
			Async         bool    `json:"async"`
			StatusMessage *string `json:"statusMessage"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(s.doc.plain[group.start:group.end], &g); err != nil {
		return "", fmt.Errorf("%s: a hook agmem cannot read: %v", event, err)
	}
	if i >= len(g.Hooks) {
		return "", fmt.Errorf("%s: agmem's hook is not where it was found", event)
	}
	h := g.Hooks[i]
	timeout, most := 600, 0
	if event == "SessionEnd" {
		timeout, most = 1, 3
	}
	if h.Timeout != nil {
		timeout = max(*h.Timeout, 1)
	}
	if most != 0 {
		timeout = min(timeout, most)
	}
	hook := map[string]any{"async": h.Async, "command": h.Command, "timeout": timeout, "type": h.Type}
	if h.StatusMessage != nil {
		hook["statusMessage"] = *h.StatusMessage
	}
	v := map[string]any{"event_name": snakeCase(event), "hooks": []any{hook}}
	if g.Matcher != nil && event != "UserPromptSubmit" && event != "Stop" {
		v["matcher"] = *g.Matcher
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	sum := sha256.Sum256(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// snakeCase is an event's name as Codex keys its trust: PostToolUse is post_tool_use.
func snakeCase(name string) string {
	var b strings.Builder
	for i, r := range name {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

func appendOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// trustConfig is the file the agent keeps what a person trusted in, in the user's
// settings directory ("" for an agent that runs every hook).
func (a Agent) trustConfig(p Place) string {
	if !a.Trusts {
		return ""
	}
	return filepath.Join(a.dir(p, User), "config.toml")
}

// projectTrusted says whether Codex trusts the project at dir: its entry under
// [projects] names the directory, the nearest one above it with .git, or, in a git
// worktree, the repository's main worktree.
func projectTrusted(cfg codexConfig, dir string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		if cfg.Projects[d].TrustLevel == "trusted" {
			return true
		}
		git := filepath.Join(d, ".git")
		if fi, err := os.Stat(git); err == nil {
			if !fi.IsDir() { // a worktree's .git file: "gitdir: <main>/.git/worktrees/<name>"
				if b, err := os.ReadFile(git); err == nil {
					gitdir := strings.TrimSpace(strings.TrimPrefix(string(b), "gitdir:"))
					if main, _, ok := strings.Cut(gitdir, string(filepath.Separator)+".git"+string(filepath.Separator)); ok {
						return cfg.Projects[main].TrustLevel == "trusted"
					}
				}
			}
			return false
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

// codexFile is the hooks file of scope s as Codex names it in the keys of what it
// trusted: $CODEX_HOME resolved when it is set, else ~/.codex as written; a project's
// under its real directory (Codex works in its physical working directory). The file
// itself is never resolved.
func (a Agent) codexFile(p Place, s Scope) string {
	dir := a.dir(p, s)
	if s == Project || a.DirEnv != "" && p.Getenv(a.DirEnv) != "" {
		if resolved, err := filepath.EvalSymlinks(dir); err == nil {
			dir = resolved
		}
	}
	return filepath.Join(dir, a.File)
}

// trustOf reads which of agmem's hooks in src, the file of scope s, the agent runs.
func (a Agent) trustOf(p Place, s Scope, src []byte, self string) *Trust {
	configPath := a.trustConfig(p)
	config, err := readFile(configPath)
	if err != nil {
		return &Trust{Config: configPath, Error: err.Error()}
	}
	set, err := a.open(src, self)
	if err != nil {
		return &Trust{Config: configPath, Error: err.Error()}
	}
	project := ""
	if s == Project {
		if project, err = filepath.Abs(p.Project); err != nil {
			return &Trust{Config: configPath, Error: err.Error()}
		}
		if resolved, err := filepath.EvalSymlinks(project); err == nil {
			project = resolved
		}
	}
	return set.trust(a.codexFile(p, s), config, configPath, project)
}
