//go:build !unix

package fulltext

import (
	"io"
	"os"
)

// mapFile reads a file's bytes where mapping it is not done.
func mapFile(f *os.File, size int) ([]byte, func() error, error) {
	data := make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, nil, err
	}
	return data, func() error { return nil }, nil
}
