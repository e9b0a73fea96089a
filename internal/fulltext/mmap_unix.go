//go:build unix

package fulltext

import (
	"os"
	"syscall"
)

// mapFile maps a file's bytes, read-only: a search reads the pages it touches, and
// the system's page cache keeps them for the next process.
func mapFile(f *os.File, size int) ([]byte, func() error, error) {
	if size == 0 {
		return nil, func() error { return nil }, nil
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, func() error { return syscall.Munmap(data) }, nil
}
