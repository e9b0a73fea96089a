//go:build windows

package journal

import "os"

// unlockFile does nothing on Windows: closing f frees bbolt's lock on it.
func unlockFile(*os.File) {}

// keepOwner does nothing on Windows, whose files have no owner and group of this kind.
func keepOwner(string, os.FileInfo) {}
