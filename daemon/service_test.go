package daemon

import (
	"bytes"
	"encoding/xml"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// A repo path with a space, a quote, a percent sign and a dollar: what systemd and XML
// would read as syntax if agmem did not quote it.
const (
	goldenExe  = "/usr/local/bin/agmem"
	goldenRepo = `/home/ana/agent "memory" 100%$HOME`
)

func TestServiceFiles(t *testing.T) {
	for _, tt := range []struct{ goos, golden, path string }{
		{"linux", "agmem.service", "/home/ana/.config/systemd/user/agmem-daemon-agent-memory-100-HOME-c103ac3e.service"},
		{"darwin", "agmem.plist", "/home/ana/Library/LaunchAgents/dev.agmem.daemon.agent-memory-100-HOME-c103ac3e.plist"},
	} {
		t.Run(tt.goos, func(t *testing.T) {
			svc, err := ServiceFor(tt.goos, "/home/ana", goldenExe, goldenRepo)
			if err != nil {
				t.Fatal(err)
			}
			if svc.Path != tt.path {
				t.Errorf("path %s, want %s", svc.Path, tt.path)
			}
			golden := filepath.Join("testdata", tt.golden)
			if *update {
				if err := os.WriteFile(golden, svc.Content, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(svc.Content, want) {
				t.Errorf("%s differs from %s (go test -update rewrites it):\n%s", tt.goos, golden, svc.Content)
			}
		})
	}
	if _, err := ServiceFor("plan9", "/home/ana", goldenExe, goldenRepo); err == nil {
		t.Error("a service for plan9: want an error")
	}
}

// The plist is well-formed XML whose program arguments are exactly the command.
func TestLaunchdAgentArguments(t *testing.T) {
	svc, _ := ServiceFor("darwin", "/home/ana", goldenExe, goldenRepo)
	dec := xml.NewDecoder(bytes.NewReader(svc.Content))
	var strs []string
	inArray := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the plist is not well-formed XML: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			if el.Name.Local == "array" {
				inArray = true
			}
			if el.Name.Local == "string" && inArray {
				var s string
				if err := dec.DecodeElement(&s, &el); err != nil {
					t.Fatal(err)
				}
				strs = append(strs, s)
			}
		case xml.EndElement:
			if el.Name.Local == "array" {
				inArray = false
			}
		}
	}
	want := []string{goldenExe, "daemon", "run", "--repo", goldenRepo}
	if strings.Join(strs, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("ProgramArguments %q, want %q", strs, want)
	}
}

// systemd itself accepts the unit, where systemd-analyze is installed.
func TestSystemdVerifiesTheUnit(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed")
	}
	exe, err := os.Executable() // verify checks that the command exists
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	svc, _ := ServiceFor("linux", dir, exe, filepath.Join(dir, `agent "memory" 100%$HOME`))
	path := filepath.Join(dir, filepath.Base(svc.Path))
	if err := os.WriteFile(path, svc.Content, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s\n%s", err, out, svc.Content)
	}
}
