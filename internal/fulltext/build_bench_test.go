package fulltext

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// BenchmarkAdd adds documents shaped as recall's: a tool, a summary, arguments, and a
// result of a kilobyte of Go source.
func BenchmarkAdd(b *testing.B) {
	var docs []Doc
	root := filepath.Join(runtime.GOROOT(), "src", "net", "http")
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || len(docs) >= 2000 {
			return err
		}
		data, _ := os.ReadFile(path)
		rel, _ := filepath.Rel(root, path)
		for len(data) >= 1000 && len(docs) < 2000 {
			docs = append(docs, Doc{ID: int64(len(docs)), Fields: []string{"Read", "Read file_path=" + rel, `{"file_path":"` + rel + `"}`, string(data[:1000]), "", rel},
				Keys: []string{"claude-code", "semantic", "Read", "s", "0"}})
			data = data[1000:]
		}
		return nil
	})
	b.ReportAllocs()
	b.ResetTimer()
	var bu *Builder
	for i := range b.N {
		if i%len(docs) == 0 {
			bu = NewBuilder(6, 5)
		}
		d := docs[i%len(docs)]
		d.ID = int64(i)
		bu.Add(d)
	}
}
