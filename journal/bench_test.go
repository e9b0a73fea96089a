package journal

import (
	"testing"
	"time"

	"github.com/agmem/agmem/memory"
)

// BenchmarkAppendOne is what one `agmem record` costs the journal: take the lock, open
// the file, one transaction with one entry, close.
func BenchmarkAppendOne(b *testing.B) {
	j := newJournal(b)
	at := t0
	for b.Loop() {
		at = at.Add(time.Millisecond)
		if _, err := j.Append([]memory.Entry{observation("s", "Read", memory.Semantic, at)}, gap, at); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendBatch1000 is `agmem record --jsonl` with 1000 lines: one transaction.
func BenchmarkAppendBatch1000(b *testing.B) {
	j := newJournal(b)
	at := t0
	entries := make([]memory.Entry, 1000)
	for b.Loop() {
		for i := range entries {
			at = at.Add(time.Millisecond)
			entries[i] = observation("s", "Read", memory.Semantic, at)
		}
		if _, err := j.Append(entries, gap, at); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(entries)), "ns/entry")
}
