// Package testsource gives benchmarks text like what agents' tools read and write:
// pieces of Go's own sources, where "token", "key" and "secret" are common words. It is
// for tests only.
package testsource

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Piece is 1000 bytes of a Go source file, made valid UTF-8.
type Piece struct {
	File string // the file, relative to the Go tree's src
	Text string
}

// Pieces returns n pieces of the Go tree's sources, the pieces of one file in every 16,
// from all over the tree. With no sources to read, it skips tb.
func Pieces(tb testing.TB, n int) []Piece {
	root := filepath.Join(runtime.GOROOT(), "src")
	var pieces []Piece
	files := 0
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || len(pieces) == n {
			return err
		}
		if files++; files%16 != 0 {
			return nil
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(root, path)
		for ; err == nil && len(data) >= 1000 && len(pieces) < n; data = data[1000:] {
			pieces = append(pieces, Piece{rel, strings.ToValidUTF8(string(data[:1000]), "?")})
		}
		return err
	})
	if len(pieces) == 0 {
		tb.Skip("no Go sources under " + root)
	}
	return pieces
}
