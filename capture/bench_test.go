package capture

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// BenchmarkDecodeNative decodes native lines as scripts/bench's ingest row writes
// them: read_file calls whose results are 1 KiB pieces of Go's own sources, where
// "token", "key" and "secret" are common words.
func BenchmarkDecodeNative(b *testing.B) {
	lines := sourceLines(b, 512)
	p := defaultPolicy()
	now := time.Now()
	size := 0
	for _, l := range lines {
		size += len(l)
	}
	b.SetBytes(int64(size / len(lines)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := Decode(lines[i%len(lines)], p, now); err != nil {
			b.Fatal(err)
		}
	}
}

// sourceLines are n native lines of 1 KiB pieces of the Go tree's sources, the pieces
// of one file in every 16, from all over the tree.
func sourceLines(b *testing.B, n int) [][]byte {
	root := filepath.Join(runtime.GOROOT(), "src")
	var lines [][]byte
	files := 0
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || len(lines) == n {
			return err
		}
		if files++; files%16 != 0 {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for ; len(data) >= 1000 && len(lines) < n; data = data[1000:] {
			line, _ := json.Marshal(map[string]any{
				"tool_name":   "read_file",
				"tool_use_id": fmt.Sprintf("toolu_%08d", len(lines)),
				"arguments":   map[string]string{"path": rel},
				"result":      strings.ToValidUTF8(string(data[:1000]), "?"),
				"session_id":  "bench-ingest",
				"timestamp":   "2026-11-30T09:00:00Z",
			})
			lines = append(lines, line)
		}
		return nil
	})
	if len(lines) == 0 {
		b.Skip("no Go sources under " + root)
	}
	return lines
}
