//go:build windows

package journal

import "os"

// unlockFile does nothing on Windows: closing f frees bbolt's lock on it.
func unlockFile(*os.File) {}
