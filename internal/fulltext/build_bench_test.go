package fulltext

import (
	"testing"

	"github.com/agmem/agmem/internal/testsource"
)

// BenchmarkAdd adds documents shaped as recall's: a tool, a summary, arguments, and a
// result of a kilobyte of Go source.
func BenchmarkAdd(b *testing.B) {
	var docs []Doc
	for i, p := range testsource.Pieces(b, 2000) {
		docs = append(docs, Doc{ID: int64(i), Fields: []string{"Read", "Read file_path=" + p.File, `{"file_path":"` + p.File + `"}`, p.Text, "", p.File},
			Keys: []string{"claude-code", "semantic", "Read", "s", "0"}})
	}
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
