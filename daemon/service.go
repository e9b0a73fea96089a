package daemon

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/agmem/agmem/internal/shell"
)

// Service is a definition that makes an init system run the daemon of one memory repo
// at login, and restart it if it fails.
type Service struct {
	Path    string   // where it is installed
	Content []byte   // the file
	Enable  []string // the commands that start it now and at every login
}

// ServiceFor is the service for goos: a systemd user unit on Linux, a launchd agent on
// macOS. home is the user's home directory, exe the agmem executable, repo the memory
// repo's root; both absolute.
func ServiceFor(goos, home, exe, repo string) (Service, error) {
	name := serviceName(repo)
	switch goos {
	case "linux":
		unit := "agmem-daemon-" + name + ".service"
		return Service{
			Path:    filepath.Join(home, ".config", "systemd", "user", unit),
			Content: systemdUnit(exe, repo),
			Enable:  []string{"systemctl --user daemon-reload", "systemctl --user enable --now " + unit},
		}, nil
	case "darwin":
		label := "dev.agmem.daemon." + name
		path := filepath.Join(home, "Library", "LaunchAgents", label+".plist")
		return Service{
			Path:    path,
			Content: launchdAgent(label, exe, repo),
			Enable:  []string{"launchctl bootstrap gui/$(id -u) " + shell.Quote(path)},
		}, nil
	}
	return Service{}, fmt.Errorf("agmem daemon install knows systemd (Linux) and launchd (macOS), not %s", goos)
}

// unsafeName is compiled on first use: package variables are built at every agmem
// start, agmem record's included.
var unsafeName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_-]+`) })

// serviceName tells the daemon of repo from others: its directory's name, made safe,
// and a hash of its whole path, so that two repos of one name get two services.
func serviceName(repo string) string {
	sum := sha256.Sum256([]byte(repo))
	base := strings.Trim(unsafeName().ReplaceAllString(filepath.Base(repo), "-"), "-")
	if len(base) > 40 {
		base = base[:40]
	}
	return base + "-" + hex.EncodeToString(sum[:4])
}

// stopTimeout is how long an init system lets the daemon flush a last time before it
// kills it; nothing is lost then either.
const stopTimeout = 60

func systemdUnit(exe, repo string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "[Unit]\nDescription=agmem daemon for %s\n", systemdEscape(repo))
	b.WriteString("Documentation=https://github.com/agmem/agmem#running-the-daemon\n\n")
	b.WriteString("[Service]\nType=simple\n")
	fmt.Fprintf(&b, "ExecStart=%s daemon run --repo %s\n", systemdQuote(exe), systemdQuote(repo))
	b.WriteString("ExecReload=/bin/kill -HUP $MAINPID\n")
	fmt.Fprintf(&b, "TimeoutStopSec=%d\nRestart=on-failure\nRestartSec=5\n\n", stopTimeout)
	b.WriteString("[Install]\nWantedBy=default.target\n")
	return []byte(b.String())
}

// systemdEscape keeps systemd from expanding % specifiers in free text.
func systemdEscape(s string) string { return strings.ReplaceAll(s, "%", "%%") }

// systemdQuote quotes one word of a command line for systemd: in double quotes, with
// backslashes and quotes escaped, and % and $ doubled so that nothing is expanded.
func systemdQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "%", "%%", "$", "$$")
	return `"` + r.Replace(s) + `"`
}

func launchdAgent(label, exe, repo string) []byte {
	var b strings.Builder
	b.WriteString(xml.Header)
	b.WriteString(`<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">` + "\n")
	b.WriteString("<plist version=\"1.0\">\n<dict>\n")
	fmt.Fprintf(&b, "\t<key>Label</key>\n\t<string>%s</string>\n", xmlText(label))
	b.WriteString("\t<key>ProgramArguments</key>\n\t<array>\n")
	for _, arg := range []string{exe, "daemon", "run", "--repo", repo} {
		fmt.Fprintf(&b, "\t\t<string>%s</string>\n", xmlText(arg))
	}
	b.WriteString("\t</array>\n")
	fmt.Fprintf(&b, "\t<key>WorkingDirectory</key>\n\t<string>%s</string>\n", xmlText(repo))
	b.WriteString("\t<key>RunAtLoad</key>\n\t<true/>\n")
	b.WriteString("\t<key>KeepAlive</key>\n\t<dict>\n\t\t<key>SuccessfulExit</key>\n\t\t<false/>\n\t</dict>\n")
	fmt.Fprintf(&b, "\t<key>ExitTimeOut</key>\n\t<integer>%d</integer>\n", stopTimeout)
	b.WriteString("</dict>\n</plist>\n")
	return []byte(b.String())
}

func xmlText(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
