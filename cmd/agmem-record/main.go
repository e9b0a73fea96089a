// Command agmem-record is "agmem record" in a binary of its own, the one agmem's hooks
// run on every tool call: it links no git code and no command line library, so it
// starts faster than agmem (see record.Main and BENCHMARKS.md). "agmem-record context"
// is the context hook at a session's start (see sessionstart.Main).
package main

import (
	"os"

	"github.com/agmem/agmem/sessionstart"
)

func main() {
	os.Exit(sessionstart.HooksMain(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
