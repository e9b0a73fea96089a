package mcp

import (
	"path/filepath"
	"strings"
)

// launchers run the server they are given rather than being it: a server they start is
// named after the package or script it is.
var launchers = map[string]bool{"npx": true, "bunx": true, "pnpx": true, "uvx": true, "pipx": true,
	"uv": true, "node": true, "bun": true, "deno": true, "python": true, "python3": true}

// ServerName is the name a server's tools are recorded under when none is given: the
// base name of its command, or of the package or script a launcher runs (npx -y
// @modelcontextprotocol/server-filesystem is server-filesystem; uvx mcp-server-git is
// mcp-server-git), without a version or an extension, and made safe.
func ServerName(command string, args []string) string {
	name := base(command)
	if launchers[name] {
		for _, a := range args {
			if !strings.HasPrefix(a, "-") && a != "run" {
				name = base(a)
				break
			}
		}
	}
	return SafeName(name)
}

// base is a command's or a package's name: no directory, npm scope, version or
// extension.
func base(s string) string {
	s = s[strings.LastIndexAny(s, `/\`)+1:]
	if i := strings.LastIndex(s, "@"); i > 0 {
		s = s[:i] // pkg@1.2.3, pkg@latest
	}
	if ext := filepath.Ext(s); ext != s {
		s = strings.TrimSuffix(s, ext)
	}
	return s
}

// SafeName makes a server's name fit the mcp__<server>__<tool> tool names agents use:
// ASCII letters, digits, '-' and '_'; anything else becomes '_'.
func SafeName(name string) string {
	name = strings.Map(func(r rune) rune {
		if r < 0x80 && (r == '-' || r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			return r
		}
		return '_'
	}, name)
	if name == "" {
		return "server"
	}
	return name
}
