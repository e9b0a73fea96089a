//go:build unix

package journal

import (
	"os"
	"syscall"
)

// unlockFile frees bbolt's lock on f. Closing f alone would not: the map bbolt made of
// the file keeps it open, and so locked, until it is unmapped.
func unlockFile(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// keepOwner gives path the owner and group of fi, as far as this process may: a journal
// shared by a group's users (each one's hooks recording into it) stays theirs when it
// is written anew.
func keepOwner(path string, fi os.FileInfo) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && os.Chown(path, int(st.Uid), int(st.Gid)) != nil {
		// Not root: the owner stays who compacted it, and the group is kept where they
		// are of it.
		os.Chown(path, -1, int(st.Gid))
	}
}
