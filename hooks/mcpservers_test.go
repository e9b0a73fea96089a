package hooks

import (
	"errors"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

var anaServer = MCPServer{Binary: "/usr/local/bin/agmem", Repo: `/home/ana/ana's "memory"`}

// Codex's config.toml: agmem's table goes in, is found again, and comes out leaving
// the file as it was; where a textual edit would read differently, it refuses.
func TestMCPServersTOML(t *testing.T) {
	codex := MCPServers{TOML: true}
	for name, src := range map[string]string{
		"none":       "",
		"no newline": `model = "o3"`,
		"crlf":       "model = \"o3\"\r\n\r\n[mcp_servers.files]\r\ncommand = \"npx\"\r\n",
		"middle":     "[mcp_servers.files]\ncommand = \"npx\"\n\n[features]\ncodex_hooks = true\n",
	} {
		t.Run(name, func(t *testing.T) {
			out, what, err := codex.install([]byte(src), anaServer)
			if err != nil || what != "the agmem MCP server added" {
				t.Fatalf("install: %q, %v", what, err)
			}
			var doc struct {
				Servers map[string]struct {
					Command string
					Args    []string
				} `toml:"mcp_servers"`
			}
			if err := toml.Unmarshal(out, &doc); err != nil {
				t.Fatalf("%v:\n%s", err, out)
			}
			if got := doc.Servers["agmem"]; got.Command != anaServer.Binary || strings.Join(got.Args, " ") != `--repo /home/ana/ana's "memory" mcp serve` {
				t.Fatalf("the server reads as %+v:\n%s", got, out)
			}
			again, what, err := codex.install(out, anaServer)
			if err != nil || what != "" || string(again) != string(out) {
				t.Fatalf("a second install: %q, %v:\n%s", what, err, again)
			}
			back, what, err := codex.uninstall(out)
			if err != nil || what != "the agmem MCP server removed" {
				t.Fatalf("uninstall: %q, %v", what, err)
			}
			if want := src; string(back) != want && !(name == "no newline" && string(back) == want+"\n") {
				t.Fatalf("uninstall gave\n%q\nnot\n%q", back, want)
			}
		})
	}
	for name, src := range map[string]string{
		"inline":          "mcp_servers = { agmem = { command = \"/usr/local/bin/agmem\", args = [\"mcp\", \"serve\"] } }\n",
		"dotted":          "[mcp_servers]\nagmem.command = \"/usr/local/bin/agmem\"\nagmem.args = [\"mcp\", \"serve\"]\n",
		"in a string":     "notes = '''\n[mcp_servers.agmem]\n'''\n",
		"not ours":        "[mcp_servers.agmem]\ncommand = \"python3\"\n",
		"not a table":     "[mcp_servers]\nagmem = 3\n",
		"not TOML at all": "[[[",
		// A table may not extend one written inline, though the TOML parser agmem reads
		// with takes it: Codex's does not.
		"other servers inline": "mcp_servers = { a = { command = \"x\" } }\n",
		"quoted, inline":       "\"mcp_servers\" = { a = { command = \"x\" } }\n",
	} {
		t.Run(name, func(t *testing.T) {
			if out, _, err := codex.install([]byte(src), anaServer); !errors.Is(err, ErrUnreadable) {
				t.Errorf("install: %v, not refused:\n%s", err, out)
			}
		})
	}
}

// Installing over agmem's own entry keeps what a person added to it: an entry the user
// disabled stays disabled, its env stays, and so do a comment on its table's header
// and the blank line before the next table. Installing it again with the same agmem
// and repo changes nothing; with another, only the command and its arguments change.
func TestMCPInstallKeepsWhatThePersonAdded(t *testing.T) {
	moved := MCPServer{Binary: "/opt/agmem/bin/agmem", Repo: anaServer.Repo}
	quoted := strings.ReplaceAll(anaServer.Repo, `"`, `\"`)
	for name, c := range map[string]struct {
		servers    MCPServers
		src        string
		keep, gone []string
	}{
		"codex": {MCPServers{TOML: true},
			"[mcp_servers.agmem] # memory\ncommand = \"/usr/local/bin/agmem\"\nargs = [\"--repo\", \"" + quoted + "\", \"mcp\", \"serve\"]\nenabled = false\nenv = { AGMEM_LOG = \"1\" }\n\n[profiles.a]\nmodel = \"o3\"\n",
			[]string{"[mcp_servers.agmem] # memory\n", "enabled = false\n", "env = { AGMEM_LOG = \"1\" }\n\n[profiles.a]"}, []string{"/usr/local/bin/agmem"}},
		"codex, CRLF": {MCPServers{TOML: true},
			"model = \"o3\"\r\n\r\n[mcp_servers.agmem]\r\ncommand = \"/usr/local/bin/agmem\"\r\nargs = [\"--repo\", \"" + quoted + "\", \"mcp\", \"serve\"]\r\nenabled = false\r\n",
			[]string{"enabled = false\r\n", "command = \"/opt/agmem/bin/agmem\"\r\n"}, []string{"/usr/local/bin/agmem"}},
		"codex, args over lines": {MCPServers{TOML: true},
			"[mcp_servers.agmem]\ncommand = \"/usr/local/bin/agmem\"\nargs = [\n  \"--repo\",\n  \"" + quoted + "\",\n  \"mcp\",\n  \"serve\",\n]\n",
			nil, []string{"/usr/local/bin/agmem"}},
		"gemini": {MCPServers{Comments: true},
			"{\n  // servers\n  \"mcpServers\": {\n    \"agmem\": {\"command\": \"/usr/local/bin/agmem\", \"args\": [\"--repo\", \"" + quoted + "\", \"mcp\", \"serve\"], \"trust\": true, \"timeout\": 30000}\n  }\n}\n",
			[]string{"// servers", `"trust": true`, `"timeout": 30000`}, []string{"/usr/local/bin/agmem"}},
		"claude": {MCPServers{Type: "stdio"},
			"{\"mcpServers\": {\"agmem\": {\"type\": \"stdio\", \"command\": \"/usr/local/bin/agmem\", \"args\": [\"--repo\", \"" + quoted + "\", \"mcp\", \"serve\"], \"env\": {\"AGMEM_LOG\": \"1\"}}}}\n",
			[]string{`"env": {"AGMEM_LOG": "1"}`}, []string{"/usr/local/bin/agmem"}},
	} {
		t.Run(name, func(t *testing.T) {
			same, what, err := c.servers.install([]byte(c.src), anaServer)
			if err != nil || what != "" || string(same) != c.src {
				t.Fatalf("installed again, the same: %q, %v:\n%s", what, err, same)
			}
			out, what, err := c.servers.install([]byte(c.src), moved)
			if err != nil || what != "the agmem MCP server updated" || !strings.Contains(string(out), moved.Binary) {
				t.Fatalf("installed again, moved: %q, %v:\n%s", what, err, out)
			}
			for _, s := range c.keep {
				if !strings.Contains(string(out), s) {
					t.Errorf("%q lost:\n%s", s, out)
				}
			}
			for _, s := range c.gone {
				if strings.Contains(string(out), s) {
					t.Errorf("%q kept:\n%s", s, out)
				}
			}
		})
	}
}
