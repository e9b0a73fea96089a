// Package testcmd owns what makes a test binary double as agmem's two commands: tests
// that run agmem as real processes (testscript stories, the real agents' hooks) put it
// on PATH under both names, so exits, signals and kills are real.
package testcmd

import (
	"os"

	"github.com/agmem/agmem/cli"
	"github.com/agmem/agmem/sessionstart"
)

// Commands are agmem and agmem-record, as testscript.Main takes them.
func Commands() map[string]func() {
	return map[string]func(){
		"agmem":        func() { os.Exit(cli.Main(os.Args, os.Stdin, os.Stdout, os.Stderr)) },
		"agmem-record": func() { os.Exit(sessionstart.HooksMain(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	}
}
