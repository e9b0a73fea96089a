package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLinksOnlyRecording keeps agmem-record what hooks need it to be: a binary without
// git, the command line library or the model's client, each of whose package
// initialisation would cost every tool call of every agent.
func TestLinksOnlyRecording(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/go-git/", "github.com/urfave/", "github.com/openai/",
			"github.com/agmem/agmem/vcs", "github.com/agmem/agmem/flush", "github.com/agmem/agmem/cli"} {
			if strings.HasPrefix(pkg, banned) {
				t.Errorf("agmem-record links %s", pkg)
			}
		}
	}
}
