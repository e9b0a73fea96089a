//go:build unix

package journal

import (
	"os"
	"syscall"
)

// unlockFile frees bbolt's lock on f. Closing f alone would not: the map bbolt made of
// the file keeps it open, and so locked, until it is unmapped.
func unlockFile(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
