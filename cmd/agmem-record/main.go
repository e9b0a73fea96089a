// Command agmem-record is "agmem record" in a binary of its own, the one agmem's hooks
// run on every tool call: it links no git code and no command line library, so it
// starts faster than agmem (see record.Main and BENCHMARKS.md).
package main

import (
	"os"

	"github.com/agmem/agmem/record"
)

func main() {
	os.Exit(record.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
