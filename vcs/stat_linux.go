package vcs

import (
	"os"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// fillStat copies what git compares to decide, without reading a file, that it did
// not change.
func fillStat(e *index.Entry, fi os.FileInfo) {
	e.Size = uint32(fi.Size())
	e.ModifiedAt = fi.ModTime()
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		e.CreatedAt = time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
		e.Dev, e.Inode = uint32(st.Dev), uint32(st.Ino)
		e.UID, e.GID = st.Uid, st.Gid
	}
}
