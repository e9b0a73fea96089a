package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
)

// MCPServers is where an agent reads the MCP servers it starts, by scope.
type MCPServers struct {
	User      string // the user's file, under $HOME
	UserInEnv string // the user's file under the directory the agent's DirEnv names, when it is set
	Project   string // the project's file, under its directory
	Comments  bool   // a JSON file with comments
	TOML      bool   // a TOML file, the servers a table of tables (Codex's config.toml)
	Type      string // the "type" of a stdio server, where the agent has types
}

// MCPServerName is the name agmem's server has in an agent's MCP servers.
const MCPServerName = "agmem"

// key is the top-level key that holds the MCP servers.
func (m MCPServers) key() string {
	if m.TOML {
		return "mcp_servers"
	}
	return "mcpServers"
}

// MCPPath is the file that holds the agent's MCP servers for a scope.
func (a Agent) MCPPath(p Place, s Scope) string {
	m := a.MCP
	switch {
	case s == Project:
		return filepath.Join(p.Project, m.Project)
	case m.UserInEnv != "" && p.Getenv(a.DirEnv) != "":
		return filepath.Join(p.Getenv(a.DirEnv), m.UserInEnv)
	}
	return filepath.Join(p.Home, m.User)
}

// MCPServer is agmem's MCP server as an agent starts it: agmem mcp serve, by agmem's
// absolute path, on a memory repo given by its absolute path.
type MCPServer struct {
	Binary, Repo string
}

func (s MCPServer) args() []string { return []string{"--repo", s.Repo, "mcp", "serve"} }

// jsonServer is the entry of a server in a JSON file, its keys in this order.
type jsonServer struct {
	Type    string   `json:"type,omitempty"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// isOurServer says whether a server's entry is agmem's: it runs "mcp serve" of an agmem.
func isOurServer(command string, args []string) bool {
	return strings.HasPrefix(filepath.Base(command), "agmem") && len(args) >= 2 &&
		slices.Equal(args[len(args)-2:], []string{"mcp", "serve"})
}

// PlanMCPInstall reads the agent's MCP servers file and says how adding agmem's server, or
// updating it in place, changes it.
func (a Agent) PlanMCPInstall(p Place, s Scope, srv MCPServer) (Plan, error) {
	return a.planMCP(p, s, func(src []byte) ([]byte, string, error) { return a.MCP.install(src, srv) })
}

// PlanMCPUninstall reads the agent's MCP servers file and says how taking agmem's server
// out changes it.
func (a Agent) PlanMCPUninstall(p Place, s Scope) (Plan, error) {
	plan, err := a.planMCP(p, s, func(src []byte) ([]byte, string, error) {
		if src == nil {
			return nil, "", nil
		}
		return a.MCP.uninstall(src)
	})
	if err != nil {
		return plan, err
	}
	made, _, err := a.MCP.install(nil, MCPServer{Binary: "agmem", Repo: "/"})
	if err == nil {
		made, _, err = a.MCP.uninstall(made)
	}
	if err != nil {
		return Plan{}, err
	}
	e := plan.Edits[0]
	plan.Edits[0] = uninstalled(e.Path, e.Old, e.New, made, e.What)
	return plan, nil
}

func (a Agent) planMCP(p Place, s Scope, edit func([]byte) ([]byte, string, error)) (Plan, error) {
	path := a.MCPPath(p, s)
	old, err := readFile(path)
	if err != nil {
		return Plan{}, err
	}
	text, what, err := edit(old)
	if err != nil {
		return Plan{}, fmt.Errorf("%s: %w", path, err)
	}
	return Plan{Edits: []Edit{{Path: path, Old: old, New: text, What: what}}}, nil
}

func (m MCPServers) install(src []byte, srv MCPServer) ([]byte, string, error) {
	if m.TOML {
		return m.installTOML(src, srv)
	}
	d, servers, err := m.openJSON(src)
	if err != nil {
		return nil, "", err
	}
	want := jsonServer{Type: m.Type, Command: srv.Binary, Args: srv.args()}
	if servers == nil {
		return d.add(d.root, m.key(), map[string]any{MCPServerName: want}), "the agmem MCP server added", nil
	}
	n, _ := servers.get(MCPServerName)
	switch {
	case n == nil:
		return d.add(servers, MCPServerName, want), "the agmem MCP server added", nil
	case !m.ours(d, n):
		return nil, "", fmt.Errorf("%w: it has an MCP server named %q that is not agmem mcp serve; agmem left it alone", ErrUnreadable, MCPServerName)
	}
	return m.setJSON(src, want)
}

// setJSON makes the members of agmem's entry that agmem writes (its type, command and
// arguments) want's, one at a time, and leaves what a person added to it as it is (its
// env, a timeout, "trust", "disabled"): installing again over an entry that runs the
// same changes nothing.
func (m MCPServers) setJSON(src []byte, want jsonServer) ([]byte, string, error) {
	type member struct {
		key   string
		value any
	}
	members := []member{{"command", want.Command}, {"args", want.Args}}
	if want.Type != "" {
		members = append(members, member{"type", want.Type})
	}
	out := src
	for _, member := range members {
		d, servers, err := m.openJSON(out)
		if err != nil {
			return nil, "", err
		}
		entry, _ := servers.get(MCPServerName)
		switch v, _ := entry.get(member.key); {
		case v == nil:
			out = d.add(entry, member.key, member.value)
		case !d.same(v, member.value):
			out = d.replace(v, member.value)
		}
	}
	if bytes.Equal(out, src) {
		return src, "", nil
	}
	return out, "the agmem MCP server updated", nil
}

func (m MCPServers) uninstall(src []byte) ([]byte, string, error) {
	if m.TOML {
		return m.uninstallTOML(src)
	}
	d, servers, err := m.openJSON(src)
	if err != nil {
		return nil, "", err
	}
	if servers == nil {
		return src, "", nil
	}
	n, i := servers.get(MCPServerName)
	if n == nil || !m.ours(d, n) {
		return src, "", nil
	}
	return d.remove(servers, i), "the agmem MCP server removed", nil
}

// openJSON parses a JSON file of MCP servers, and finds the object that holds them.
func (m MCPServers) openJSON(src []byte) (*document, *node, error) {
	d, err := parseDocument(src, m.Comments)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	servers, _ := d.root.get(m.key())
	if servers != nil && servers.kind != '{' {
		return nil, nil, fmt.Errorf("%w: its %q is not an object", ErrUnreadable, m.key())
	}
	return d, servers, nil
}

func (m MCPServers) ours(d *document, n *node) bool {
	var s jsonServer
	return json.Unmarshal(d.plain[n.start:n.end], &s) == nil && isOurServer(s.Command, s.Args)
}

// tomlHeader finds the header of agmem's table of MCP servers, and the next header
// after it ends the table. Compiled when first asked for: every agmem command starts
// with this package's initialisation, and these were most of it.
var (
	tomlHeader = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^[ \t]*\[[ \t]*mcp_servers[ \t]*\.[ \t]*("agmem"|agmem)[ \t]*\][ \t]*(#.*)?(\r?\n|\z)`)
	})
	tomlNext = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^[ \t]*\[`) })
	// tomlInline finds mcp_servers given a value on a line of its own (an inline table),
	// which no table may extend: BurntSushi's parser takes such a file, Codex's does not.
	tomlInline = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^[ \t]*("mcp_servers"|'mcp_servers'|mcp_servers)[ \t]*=`)
	})
)

// installTOML writes agmem's table in place of the one there, or at the end. Every other
// line stays as it was; if the result would read differently in any other way (a server
// written inline, a header inside a multi-line string), it refuses rather than guess.
func (m MCPServers) installTOML(src []byte, srv MCPServer) ([]byte, string, error) {
	before, had, err := tomlServers(src)
	if err != nil {
		return nil, "", err
	}
	if had != nil && !isOurServer(fmt.Sprint(had["command"]), stringList(had["args"])) {
		return nil, "", fmt.Errorf("%w: it has an MCP server named %q that is not agmem mcp serve; agmem left it alone", ErrUnreadable, MCPServerName)
	}
	newline := lineEnding(src)
	quoted := func(s string) string { b, _ := json.Marshal(s); return string(b) } // JSON's escapes are TOML's
	var args []string
	for _, a := range srv.args() {
		args = append(args, quoted(a))
	}
	table := "[mcp_servers." + MCPServerName + "]" + newline + "command = " + quoted(srv.Binary) + newline +
		"args = [" + strings.Join(args, ", ") + "]" + newline
	want := map[string]any{"command": srv.Binary, "args": anyList(srv.args())}
	reads := func(out []byte, want map[string]any) bool {
		after, got, err := tomlServers(out)
		return err == nil && reflect.DeepEqual(got, want) && reflect.DeepEqual(before, after) && !tomlInline().Match(out)
	}
	start, end := tomlTable(src)
	if start < 0 {
		if out := appendTable(src, table, newline); reads(out, want) {
			return out, "the agmem MCP server added", nil
		}
		return nil, "", errRewrite
	}
	if had["command"] == want["command"] && reflect.DeepEqual(had["args"], want["args"]) {
		return src, "", nil
	}
	// agmem's table: its command and args lines made want's, and every other line of it
	// left as it is (env, enabled = false, a comment), as setJSON does.
	header := tomlHeader().FindIndex(src[start:end])
	body := src[start+header[1] : end]
	body = setTOMLKey(body, "command", quoted(srv.Binary), newline)
	body = setTOMLKey(body, "args", "["+strings.Join(args, ", ")+"]", newline)
	kept := maps.Clone(want)
	for k, v := range had {
		if _, agmems := want[k]; !agmems {
			kept[k] = v
		}
	}
	if out := slices.Concat(src[:start+header[1]], body, src[end:]); reads(out, kept) {
		return out, "the agmem MCP server updated", nil
	}
	// A line of it agmem cannot edit alone (args written over several lines): a table
	// that holds nothing but agmem's own keys is written whole again.
	if len(kept) == len(want) {
		if out := slices.Concat(src[:start], []byte(table), src[end:]); reads(out, want) {
			return out, "the agmem MCP server updated", nil
		}
	}
	return nil, "", errRewrite
}

var errRewrite = fmt.Errorf("%w: agmem cannot write its MCP server into it without changing how the rest reads", ErrUnreadable)

// setTOMLKey is a table's body with key's line given value (a value on one line: one
// that spans more leaves the table reading otherwise, which installTOML refuses), or
// with the line added first when it has none.
func setTOMLKey(body []byte, key, value, newline string) []byte {
	line := regexp.MustCompile(`(?m)^([ \t]*` + key + `[ \t]*=[ \t]*)[^\r\n#]*?([ \t]*(#[^\r\n]*)?)\r?$`)
	if loc := line.FindSubmatchIndex(body); loc != nil {
		return slices.Concat(body[:loc[3]], []byte(value), body[loc[4]:])
	}
	return slices.Concat([]byte(key+" = "+value+newline), body)
}

func (m MCPServers) uninstallTOML(src []byte) ([]byte, string, error) {
	rest, had, err := tomlServers(src)
	if err != nil {
		return nil, "", err
	}
	if had == nil || !isOurServer(fmt.Sprint(had["command"]), stringList(had["args"])) {
		return src, "", nil
	}
	start, end := tomlTable(src)
	if start < 0 {
		return nil, "", fmt.Errorf("%w: agmem's MCP server is not a table of its own in it; take it out by hand", ErrUnreadable)
	}
	before := src[:start]
	for _, blank := range []string{"\r\n\r\n", "\n\n"} { // the blank line install put before it
		if bytes.HasSuffix(before, []byte(blank)) {
			before = before[:len(before)-len(blank)/2]
			break
		}
	}
	out := append(append([]byte{}, before...), src[end:]...)
	after, got, err := tomlServers(out)
	if err != nil || got != nil || !reflect.DeepEqual(rest, after) {
		return nil, "", fmt.Errorf("%w: agmem cannot take its MCP server out of it without changing how the rest reads", ErrUnreadable)
	}
	return out, "the agmem MCP server removed", nil
}

// tomlTable is where agmem's table lies in src, from its header to the next, or -1.
func tomlTable(src []byte) (start, end int) {
	loc := tomlHeader().FindIndex(src)
	if loc == nil {
		return -1, -1
	}
	end = len(src)
	if next := tomlNext().FindIndex(src[loc[1]:]); next != nil {
		end = loc[1] + next[0]
	}
	return loc[0], end
}

// tomlServers reads a TOML file: all of it but agmem's server (an emptied mcp_servers
// left out), and agmem's server, or nil.
func tomlServers(src []byte) (rest map[string]any, ours map[string]any, err error) {
	if err := toml.Unmarshal(src, &rest); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	servers, _ := rest["mcp_servers"].(map[string]any)
	if v, ok := servers[MCPServerName]; ok {
		if ours, _ = v.(map[string]any); ours == nil {
			return nil, nil, fmt.Errorf("%w: its mcp_servers.%s is not a table", ErrUnreadable, MCPServerName)
		}
		delete(servers, MCPServerName)
		if len(servers) == 0 {
			delete(rest, "mcp_servers")
		}
	}
	return rest, ours, nil
}

func stringList(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, e := range list {
		s, _ := e.(string)
		out = append(out, s)
	}
	return out
}

func anyList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
