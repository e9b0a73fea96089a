// Package atomicfile owns writing a file whole or not at all: under a temporary name
// beside it, synced, then renamed into place.
package atomicfile

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
)

// Write writes path with what write puts in the buffered writer it is given, under a
// temporary name that pattern makes (as os.CreateTemp does, in path's directory), with
// mode, synced, then renamed into place: a reader sees the old file or the whole new
// one, and a crash leaves at most the temporary file.
func Write(path, pattern string, mode fs.FileMode, write func(*bufio.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), pattern)
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone after the rename; cleans up after a failure
	bw := bufio.NewWriterSize(tmp, 64<<10)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
