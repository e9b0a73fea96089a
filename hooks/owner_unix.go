//go:build unix

package hooks

import (
	"io/fs"
	"os"
	"syscall"
)

// giveBack gives path to the owner of of (the file it replaces, or the directory it
// was made in) when agmem runs as root: "sudo agmem hooks install" must not leave a
// user's settings owned by root, which the agent, run as that user, could not read.
func giveBack(path string, of fs.FileInfo) error {
	st, ok := of.Sys().(*syscall.Stat_t)
	if !ok || os.Geteuid() != 0 {
		return nil
	}
	return os.Lchown(path, int(st.Uid), int(st.Gid))
}
