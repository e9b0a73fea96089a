//go:build !unix

package failpoint

import "os"

func die() { os.Exit(137) }
