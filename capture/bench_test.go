package capture

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agmem/agmem/internal/testsource"
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

// sourceLines are n native lines of pieces of the Go tree's sources.
func sourceLines(b *testing.B, n int) [][]byte {
	var lines [][]byte
	for i, piece := range testsource.Pieces(b, n) {
		line, _ := json.Marshal(map[string]any{
			"tool_name":   "read_file",
			"tool_use_id": fmt.Sprintf("toolu_%08d", i),
			"arguments":   map[string]string{"path": piece.File},
			"result":      piece.Text,
			"session_id":  "bench-ingest",
			"timestamp":   "2026-11-30T09:00:00Z",
		})
		lines = append(lines, line)
	}
	return lines
}

// BenchmarkDecodeClaude decodes what Claude Code 2.1 really sent after its tool calls
// (testdata/real-agents): a hook's whole capture of a call but the journal.
func BenchmarkDecodeClaude(b *testing.B) {
	files, err := filepath.Glob("testdata/real-agents/claude-2.1.332/*-PostToolUse*.json")
	if err != nil || len(files) == 0 {
		b.Fatalf("no Claude Code payloads: %v", err)
	}
	var payloads [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		payloads = append(payloads, data)
	}
	p := defaultPolicy()
	now := time.Now()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := Decode(payloads[i%len(payloads)], p, now); err != nil {
			b.Fatal(err)
		}
	}
}
