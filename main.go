// Command agmem gives AI agents a memory that is versioned like code: every tool call
// is recorded into a journal and committed to git. See README.md.
package main

import (
	"os"

	"github.com/agmem/agmem/cli"
)

func main() {
	os.Exit(cli.Main(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
