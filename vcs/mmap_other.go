//go:build !unix

package vcs

import "os"

// mapFile reads a file whole, where it cannot be mapped.
func mapFile(path string) (data []byte, unmap func(), err error) {
	data, err = os.ReadFile(path)
	return data, func() {}, err
}
