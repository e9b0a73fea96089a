// Package hooks owns agmem's entries in AI agents' own settings, its hooks and its MCP
// server: it installs them, removes them and reports them, for Claude Code, Codex CLI,
// Gemini CLI and Cursor, each described once in Agents.
//
// It promises that a settings file keeps every byte agmem does not own: the file is
// edited as text (jsontext.go), never decoded and re-encoded, so other keys, other hooks,
// their order, spacing and comments stay as they were. Installing twice changes nothing;
// a file that does not parse is refused, never rewritten. agmem's hooks are known by their
// command (agmem-record, or an agmem binary running "record"), so a reinstall after the
// binary or the memory repo moved updates them instead of adding a second set.
package hooks

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agmem/agmem/internal/shell"
)

// Agent describes one agent's hook settings.
type Agent struct {
	Name     string // as typed on the command line
	Title    string // as people call it
	Dir      string // its settings directory, under $HOME (user scope) or the project
	DirEnv   string // an environment variable that moves the user directory, if any
	File     string // the file in Dir that holds the hooks
	Comments bool   // the agent reads the file as JSON with comments
	Version  int    // a top-level "version" the file must have, if not 0
	Flat     bool   // an event lists hooks, not matcher groups of hooks
	HookName string // the "name" of agmem's hook, where the agent has names
	HookType string // the "type" of agmem's hook, where the agent has types
	Timeout  int    // in the agent's unit (seconds; Gemini CLI: milliseconds); 0: its default
	Events   []Event
	Switch   *Switch // a setting that must be on for hooks to run at all
	// Trusts says the agent runs a hook only once a person trusted it (Codex: trust.go).
	Trusts bool
	MCP    MCPServers
}

// Event is one hook event agmem records, as the agent names it.
type Event struct {
	Name    string
	Matcher string // "" leaves the matcher out, which every agent reads as "all"
	Async   bool   // the agent runs the hook without waiting for it
	// Context says the event's hooks can give the agent context ("agmem context" at a
	// session's start): agmem's context hook goes beside its record hook.
	Context bool
	// Timeout, when not 0, is this event's hooks' timeout instead of the agent's.
	Timeout int
}

// Agents are the agents agmem installs hooks for, in the order they are listed.
//
// Claude Code: ~/.claude/settings.json (or $CLAUDE_CONFIG_DIR), matcher groups, timeouts
// in seconds; tool events run async so the agent never waits for agmem (PostToolBatch
// for the calls it refused before running them, which no other event reports);
// lifecycle events run in line so a session's start and end are recorded before the
// agent goes on or exits. Codex CLI: hooks.json in Claude's shape, run in line, with no
// matcher (Codex reads matchers as regular expressions: none means all tools);
// PreToolUse too, since Codex reports a call it refuses (a patch that fails its check)
// there alone; SessionEnd's timeout is 3 s, the most Codex allows it; Codex runs only
// the hooks a person trusted (trust.go). Gemini CLI: settings.json with comments,
// timeouts in milliseconds, hooks named so that "/hooks disable agmem" works; the tool
// matcher is "*" and lifecycle matchers are left out (Gemini matches those exactly).
// Its hooks run while hooksConfig.enabled is on, the default since 0.26; older builds
// read tools.enableHooks, and some of January 2026 hooks.enabled, so a false in either
// is reported too. Cursor: hooks.json version 1, each event a list of commands.
//
// MCP servers (agmem mcp install): Claude Code's user ones in ~/.claude.json (in
// $CLAUDE_CONFIG_DIR when set), a project's in .mcp.json, "type": "stdio"; Codex's in
// config.toml, a [mcp_servers.NAME] table each; Gemini CLI's and Cursor's under
// "mcpServers" of settings.json and mcp.json.
var Agents = []Agent{
	{
		Name: "claude", Title: "Claude Code", Dir: ".claude", DirEnv: "CLAUDE_CONFIG_DIR", File: "settings.json",
		HookType: "command", Timeout: 10,
		Events: []Event{
			{Name: "PostToolUse", Matcher: "*", Async: true},
			{Name: "PostToolUseFailure", Matcher: "*", Async: true},
			{Name: "PostToolBatch", Async: true},
			{Name: "SessionStart", Matcher: "*", Context: true},
			{Name: "SessionEnd", Matcher: "*"},
			{Name: "UserPromptSubmit"},
			{Name: "Stop"},
		},
		MCP: MCPServers{User: ".claude.json", UserInEnv: ".claude.json", Project: ".mcp.json", Type: "stdio"},
	},
	{
		Name: "codex", Title: "Codex CLI", Dir: ".codex", DirEnv: "CODEX_HOME", File: "hooks.json",
		HookType: "command", Timeout: 10,
		Events: []Event{{Name: "PostToolUse"}, {Name: "PreToolUse"}, {Name: "SessionStart", Context: true}, {Name: "UserPromptSubmit"},
			{Name: "Stop"}, {Name: "SessionEnd", Timeout: 3}},
		Switch: &Switch{File: "config.toml", Table: "features", Key: "hooks", Deprecated: "features.codex_hooks"},
		Trusts: true,
		MCP:    MCPServers{User: ".codex/config.toml", UserInEnv: "config.toml", Project: ".codex/config.toml", TOML: true},
	},
	{
		Name: "gemini", Title: "Gemini CLI", Dir: ".gemini", File: "settings.json", Comments: true,
		HookName: "agmem", HookType: "command", Timeout: 10000,
		Events: []Event{
			{Name: "AfterTool", Matcher: "*"},
			{Name: "BeforeAgent"},
			{Name: "AfterAgent"},
			{Name: "SessionStart", Context: true},
			{Name: "SessionEnd"},
		},
		Switch: &Switch{File: "settings.json", Table: "hooksConfig", Key: "enabled", Aliases: []string{"tools.enableHooks", "hooks.enabled"}},
		MCP:    MCPServers{User: ".gemini/settings.json", Project: ".gemini/settings.json", Comments: true},
	},
	{
		Name: "cursor", Title: "Cursor", Dir: ".cursor", File: "hooks.json", Version: 1, Flat: true,
		Events: []Event{
			{Name: "afterShellExecution"}, {Name: "afterMCPExecution"}, {Name: "afterFileEdit"},
			{Name: "postToolUse"}, {Name: "beforeSubmitPrompt"}, {Name: "stop"},
		},
		MCP: MCPServers{User: ".cursor/mcp.json", Project: ".cursor/mcp.json"},
	},
}

// Names lists the agents' names.
func Names() []string {
	var names []string
	for _, a := range Agents {
		names = append(names, a.Name)
	}
	return names
}

// RecordBinary is the name of "agmem record" in a binary of its own (cmd/agmem-record),
// which hooks run when it is installed beside agmem: it starts faster.
const RecordBinary = "agmem-record"

// Recorder is what agmem's hooks run: agmem-record, or an agmem binary running record,
// recording into a memory repo; and, at a session's start, Context: agmem-record or an
// agmem binary running context ("" for no context hook).
type Recorder struct {
	Binary string `json:"binary"`
	Repo   string `json:"repo,omitempty"`
	// Agent is the agent the hook is for, given to record as --agent: only the hook
	// knows for sure whose payload it is (Codex sends Claude Code's). "": left to record
	// to tell, as hooks agmem wrote before it said.
	Agent   string `json:"agent,omitempty"`
	Context string `json:"context,omitempty"`
}

// Command is the hook's shell command: absolute paths, quoted for sh, so that it works
// from whatever directory the agent runs it in and whatever the paths hold. Its standard
// output goes nowhere: record prints the ids it recorded there, and agents read a hook's
// output as a message to show (Gemini CLI), as context for the model (Claude Code and
// Codex, at a prompt or a session's start) or as a decision. Errors still reach stderr,
// and the exit status is agmem's own: 0 or 1, never the 2 that agents read as "block".
func (r Recorder) Command() string {
	run := shell.Quote(r.Binary) + " record"
	if Standalone(r.Binary) {
		run = shell.Quote(r.Binary)
	}
	if r.Agent != "" {
		run += " --agent " + r.Agent
	}
	return run + " --repo " + shell.Quote(r.Repo) + " >/dev/null"
}

// ContextCommand is the context hook's shell command: "agmem context" (or
// "agmem-record context", which runs it when it cannot answer alone) at a session's
// start, its output the JSON Claude Code, Codex and Gemini CLI read their context from.
func (r Recorder) ContextCommand() string {
	agent := ""
	if r.Agent != "" {
		agent = " --agent " + r.Agent
	}
	return shell.Quote(r.Context) + " context" + agent + " --repo " + shell.Quote(r.Repo) + " --format claude"
}

// Standalone reports whether binary is agmem-record, which records without being told to.
func Standalone(binary string) bool {
	return strings.TrimSuffix(filepath.Base(binary), ".exe") == RecordBinary
}

// recorderOf recognises agmem's hook command: agmem-record whose only other words are an
// --agent and a --repo, or an agmem binary (one named agmem, or self) whose only other
// words are "record", an --agent and a --repo, its output sent to /dev/null or not (see
// withoutRedirections). It returns what the command runs.
func recorderOf(command, self string) (Recorder, bool) {
	words, ok := shell.Words(withoutRedirections(command))
	if !ok || len(words) == 0 {
		return Recorder{}, false
	}
	r := Recorder{Binary: words[0]}
	record := Standalone(r.Binary)
	if base := strings.TrimSuffix(filepath.Base(r.Binary), ".exe"); !record && base != "agmem" && r.Binary != self {
		return Recorder{}, false
	}
	for i := 1; i < len(words); i++ {
		switch w := words[i]; {
		case w == "record" && !record:
			record = true
		case w == "--repo" && i+1 < len(words):
			r.Repo = words[i+1]
			i++
		case strings.HasPrefix(w, "--repo="):
			r.Repo = strings.TrimPrefix(w, "--repo=")
		case w == "--agent" && i+1 < len(words):
			r.Agent = words[i+1]
			i++
		case strings.HasPrefix(w, "--agent="):
			r.Agent = strings.TrimPrefix(w, "--agent=")
		default:
			return Recorder{}, false
		}
	}
	if !record {
		return Recorder{}, false
	}
	return r, true
}

// isContextHook recognises agmem's context hook: agmem-record or an agmem binary (one
// named agmem, or self) whose only other words are "context", an --agent, a --repo and
// "--format claude".
func isContextHook(command, self string) bool {
	words, ok := shell.Words(command)
	if !ok || len(words) < 2 {
		return false
	}
	if base := strings.TrimSuffix(filepath.Base(words[0]), ".exe"); base != "agmem" && words[0] != self && !Standalone(words[0]) || words[1] != "context" {
		return false
	}
	for i := 2; i < len(words); i++ {
		switch w := words[i]; {
		case (w == "--repo" || w == "--format" || w == "--agent") && i+1 < len(words):
			i++
		case strings.HasPrefix(w, "--repo="), strings.HasPrefix(w, "--format="), strings.HasPrefix(w, "--agent="):
		default:
			return false
		}
	}
	return true
}

// withoutRedirections takes off the end of a command the redirections people put on
// agmem's hook by hand: standard output, standard error or both sent to /dev/null
// (">/dev/null", "1> /dev/null", "2>/dev/null", ">>/dev/null", "&>/dev/null") and
// "2>&1", in any order and number. Anything else is left for shellWords to refuse.
func withoutRedirections(command string) string {
	for {
		s := strings.TrimRight(command, " \t")
		if rest, ok := strings.CutSuffix(s, "2>&1"); ok && wordEnds(rest) {
			command = rest
			continue
		}
		rest, ok := strings.CutSuffix(s, "/dev/null")
		if !ok {
			return s
		}
		rest, ok = strings.CutSuffix(strings.TrimRight(rest, " \t"), ">")
		if !ok || strings.HasSuffix(rest, `\`) { // \> is a character of a word
			return s
		}
		if r, ok := strings.CutSuffix(rest, ">"); ok && !strings.HasSuffix(r, `\`) {
			rest = r // >> appends, to nothing all the same
		}
		// A file descriptor (or bash's & for both) belongs to the redirection only as a
		// word of its own: in "/m2>/dev/null" the 2 is the path's.
		if n := len(rest); n > 0 && strings.IndexByte("12&", rest[n-1]) >= 0 && wordEnds(rest[:n-1]) {
			rest = rest[:n-1]
		}
		command = rest
	}
}

// wordEnds says whether what follows s starts a new word: s is empty or ends in a blank
// that no backslash escapes.
func wordEnds(s string) bool {
	n := len(s)
	return n == 0 || (s[n-1] == ' ' || s[n-1] == '\t') && (n == 1 || s[n-2] != '\\')
}

// hook is agmem's hook as the agent's settings hold it; fields the agent does not have
// are left out.
type hook struct {
	Name    string `json:"name,omitempty"`
	Type    string `json:"type,omitempty"`
	Command string `json:"command"`
	Timeout int    `json:"timeout,omitempty"`
	Async   bool   `json:"async,omitempty"`
}

type group struct {
	Matcher string `json:"matcher,omitempty"`
	Hooks   []hook `json:"hooks"`
}

// entry is what agmem puts in an event's list.
func (a Agent) entry(ev Event, r Recorder) any {
	r.Agent = a.Name
	timeout := cmp.Or(ev.Timeout, a.Timeout)
	h := hook{Name: a.HookName, Type: a.HookType, Command: r.Command(), Timeout: timeout, Async: ev.Async}
	if a.Flat {
		return h
	}
	g := group{Matcher: ev.Matcher, Hooks: []hook{h}}
	if ev.Context && r.Context != "" {
		g.Hooks = append(g.Hooks, hook{Name: a.HookName, Type: a.HookType, Command: r.ContextCommand(), Timeout: timeout})
	}
	return g
}

// ErrUnreadable wraps every reason a settings file is left alone.
var ErrUnreadable = errors.New("cannot edit")

// settings is an agent's file being edited: its text, parsed again after every edit.
type settings struct {
	agent Agent
	self  string // this agmem binary, recognised whatever its name
	doc   *document
}

func (a Agent) open(src []byte, self string) (*settings, error) {
	d, err := parseDocument(src, a.Comments)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	s := &settings{agent: a, self: self, doc: d}
	if a.Version != 0 {
		if v, _ := d.root.get("version"); v != nil && strings.TrimSpace(string(d.plain[v.start:v.end])) != fmt.Sprint(a.Version) {
			return nil, fmt.Errorf("%w: its \"version\" is %s; agmem knows version %d", ErrUnreadable, d.plain[v.start:v.end], a.Version)
		}
	}
	if h, _ := d.root.get("hooks"); h != nil {
		if h.kind != '{' {
			return nil, fmt.Errorf("%w: its \"hooks\" is not an object", ErrUnreadable)
		}
		for _, ev := range a.Events {
			if list, _ := h.get(ev.Name); list != nil && list.kind != '[' {
				return nil, fmt.Errorf("%w: its \"hooks\".%q is not a list", ErrUnreadable, ev.Name)
			}
		}
	}
	return s, nil
}

func (s *settings) set(src []byte) {
	d, err := parseDocument(src, s.agent.Comments)
	if err != nil {
		panic(fmt.Sprintf("hooks: an edit broke the JSON: %v\n%s", err, src)) // a bug, never the input's fault
	}
	s.doc = d
}

func (s *settings) hooksObject() *node {
	h, _ := s.doc.root.get("hooks")
	if h == nil || h.kind != '{' {
		return nil
	}
	return h
}

// list is an event's list of entries, or nil.
func (s *settings) list(event string) *node {
	if h := s.hooksObject(); h != nil {
		if l, _ := h.get(event); l != nil && l.kind == '[' {
			return l
		}
	}
	return nil
}

// ours finds agmem's hooks in an entry: for each, its index in the entry's list of hooks
// (0 when the entry is the hook), and what it runs. all says whether the entry holds
// nothing else.
func (s *settings) ours(entry *node) (found []int, recorders []Recorder, all bool) {
	hooks := []*node{entry}
	if !s.agent.Flat {
		list, _ := entry.get("hooks")
		if entry.kind != '{' || list == nil || list.kind != '[' {
			return nil, nil, false
		}
		hooks = list.elems
	}
	for i, h := range hooks {
		if h.kind != '{' {
			continue
		}
		cmd, _ := h.get("command")
		text, ok := s.doc.stringAt(cmd)
		if !ok {
			continue
		}
		if r, ok := recorderOf(text, s.self); ok {
			found, recorders = append(found, i), append(recorders, r)
		} else if isContextHook(text, s.self) {
			found = append(found, i)
		}
	}
	return found, recorders, len(found) > 0 && len(found) == len(hooks)
}

// removeOurs takes agmem's hooks out of an event's list, and the entries that held only
// them. It says whether it removed any.
func (s *settings) removeOurs(event string) bool {
	removed := false
	for {
		list := s.list(event)
		if list == nil {
			return removed
		}
		done := true
		for i, entry := range list.elems {
			found, _, all := s.ours(entry)
			if len(found) == 0 {
				continue
			}
			if all {
				s.set(s.doc.remove(list, i))
			} else {
				inner, _ := entry.get("hooks")
				s.set(s.doc.remove(inner, found[0]))
			}
			removed, done = true, false
			break
		}
		if done {
			return removed
		}
	}
}

// Change says what an edit did to each event, and to a switch in the same file.
type Change struct {
	Added, Updated, Removed []string
	Enabled                 string // the switch agmem set true, if it did
}

// Install returns src with agmem's hooks for every event of the agent, running r; self
// is this agmem binary. Entries agmem finds of its own are updated in place, or replaced
// when they are mixed with other hooks or doubled. A switch kept in the same file is set
// true if it is unset.
func (a Agent) Install(src []byte, r Recorder, self string) ([]byte, Change, error) {
	s, err := a.open(src, self)
	if err != nil {
		return nil, Change{}, err
	}
	var ch Change
	if a.Version != 0 {
		if v, _ := s.doc.root.get("version"); v == nil {
			s.set(s.doc.add(s.doc.root, "version", a.Version))
		}
	}
	if sw := a.Switch; sw != nil && sw.File == a.File {
		state, _, err := sw.readJSON(s.doc)
		if err != nil {
			return nil, Change{}, err
		}
		if state == SwitchUnset {
			s.set(sw.enableJSON(s.doc))
			ch.Enabled = sw.String()
		}
	}
	if s.hooksObject() == nil {
		s.set(s.doc.add(s.doc.root, "hooks", struct{}{}))
	}
	for _, ev := range a.Events {
		want := a.entry(ev, r)
		list := s.list(ev.Name)
		if list == nil {
			s.set(s.doc.add(s.hooksObject(), ev.Name, []any{want}))
			ch.Added = append(ch.Added, ev.Name)
			continue
		}
		entries, only := 0, -1 // entries with agmem's hooks in the list; one holding only them
		for i, entry := range list.elems {
			found, _, all := s.ours(entry)
			if len(found) > 0 {
				entries++
			}
			if all {
				only = i
			}
		}
		switch {
		case entries == 1 && only >= 0 && s.doc.same(list.elems[only], want):
			continue
		case entries == 1 && only >= 0:
			s.set(s.doc.replace(list.elems[only], want))
			ch.Updated = append(ch.Updated, ev.Name)
		case entries > 0:
			s.removeOurs(ev.Name)
			s.set(s.doc.add(s.list(ev.Name), "", want))
			ch.Updated = append(ch.Updated, ev.Name)
		default:
			s.set(s.doc.add(list, "", want))
			ch.Added = append(ch.Added, ev.Name)
		}
	}
	if len(ch.Added)+len(ch.Updated) == 0 && ch.Enabled == "" {
		return src, ch, nil
	}
	return s.doc.src, ch, nil
}

// Uninstall returns src without agmem's hooks, in any event. An event list, and then the
// "hooks" object, that removing them leaves empty goes too, unless it holds a comment or
// its key is given twice; one that was empty before is kept. Everything else stays, a top-level "version" and every
// comment outside agmem's hooks included.
func (a Agent) Uninstall(src []byte, self string) ([]byte, Change, error) {
	s, err := a.open(src, self)
	if err != nil {
		return nil, Change{}, err
	}
	var ch Change
	h := s.hooksObject()
	if h == nil {
		return src, ch, nil
	}
	var events []string
	for _, m := range h.members {
		events = append(events, m.key)
	}
	for _, ev := range events {
		if !s.removeOurs(ev) {
			continue
		}
		ch.Removed = append(ch.Removed, ev)
		if list := s.list(ev); list != nil && len(list.elems) == 0 {
			s.removeIfBare(s.hooksObject(), ev)
		}
	}
	if len(ch.Removed) == 0 {
		return src, ch, nil
	}
	if h := s.hooksObject(); len(h.members) == 0 {
		s.removeIfBare(s.doc.root, "hooks")
	}
	return s.doc.src, ch, nil
}

// removeIfBare takes the member key out of the object, unless a comment is in it, or the
// key is given before too: the agent would read that one instead.
func (s *settings) removeIfBare(object *node, key string) {
	_, i := object.get(key)
	m := object.members[i]
	if s.doc.hasComment(m.keyStart, m.value.end) || slices.ContainsFunc(object.members[:i], func(o member) bool { return o.key == key }) {
		return
	}
	s.set(s.doc.remove(object, i))
}

// Found is what a settings file holds of agmem's.
type Found struct {
	Events    []string   `json:"events"`              // events with agmem's hooks, in the file's order
	Missing   []string   `json:"missing"`             // events agmem installs that have none
	Recorders []Recorder `json:"recorders,omitempty"` // what they run, each once
}

// Inspect reports agmem's hooks in src.
func (a Agent) Inspect(src []byte, self string) (Found, error) {
	s, err := a.open(src, self)
	if err != nil {
		return Found{}, err
	}
	f := Found{Events: []string{}, Missing: []string{}}
	seen := map[Recorder]bool{}
	if h := s.hooksObject(); h != nil {
		for _, m := range h.members {
			if live, _ := h.get(m.key); live != m.value || m.value.kind != '[' {
				continue // not a list, or a key given again later, which the agent reads instead
			}
			has := false
			for _, entry := range m.value.elems {
				_, recs, _ := s.ours(entry)
				for _, r := range recs {
					has = true
					if !seen[r] {
						seen[r] = true
						f.Recorders = append(f.Recorders, r)
					}
				}
			}
			if has {
				f.Events = append(f.Events, m.key)
			}
		}
	}
	for _, ev := range a.Events {
		if !slices.Contains(f.Events, ev.Name) {
			f.Missing = append(f.Missing, ev.Name)
		}
	}
	return f, nil
}
