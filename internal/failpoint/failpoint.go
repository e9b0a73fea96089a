// Package failpoint lets a test kill agmem abruptly at a named point, to prove that
// nothing recorded is lost or duplicated whatever moment a process dies at.
//
// It is inert unless AGMEM_FAILPOINT names a point: then the process kills itself with
// SIGKILL the moment it reaches that point, as `kill -9` would, with no deferred
// function, flush or close run.
package failpoint

import (
	"os"
	"strings"
)

// Hit kills the process if AGMEM_FAILPOINT names this point.
func Hit(name string) {
	want := os.Getenv("AGMEM_FAILPOINT")
	if want == "" {
		return
	}
	for _, w := range strings.Split(want, ",") {
		if w == name {
			die()
		}
	}
}
