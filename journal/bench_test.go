package journal

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
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
		if _, err := j.Append(Entries([]memory.Entry{observation("s", "Read", memory.Semantic, at)}), AppendOptions{IdleGap: gap, Now: at}); err != nil {
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
		if _, err := j.Append(Entries(entries), AppendOptions{IdleGap: gap, Now: at}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(entries)), "ns/entry")
}

// BenchmarkMarshalEntry is an observation of a 1 KiB read of Go source, as capture
// writes it, in JSON: by encoding/json alone, and by marshalEntry.
func BenchmarkMarshalEntry(b *testing.B) {
	e := observation("s", "Read", memory.Semantic, t0)
	src, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "src", "net", "http", "server.go"))
	if err != nil {
		b.Skip(err)
	}
	e.Observation.Result, _ = json.Marshal(string(src[:1024]))
	for _, c := range []struct {
		name    string
		marshal func(memory.Entry) ([]byte, error)
	}{{"json.Marshal", func(e memory.Entry) ([]byte, error) { return json.Marshal(e) }}, {"marshalEntry", func(e memory.Entry) ([]byte, error) { return marshalEntry(nil, e) }}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := c.marshal(e); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStagedCommit is the last transaction of a large `agmem record --jsonl`, and
// the merge of its part after it: 20,000 calls staged already, made visible at once.
// Nothing else of the record can overlap it.
func BenchmarkStagedCommit(b *testing.B) {
	const n = 20000
	at := t0
	for b.Loop() {
		b.StopTimer()
		j := newJournal(b)
		s, err := j.StartStaging(at, 30*time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		ps := make([]Prepared, n)
		for i := range ps {
			at = at.Add(time.Millisecond)
			if ps[i], err = Prepare(call("s", fmt.Sprintf("toolu_%08d", i), at)); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := s.Stage(ps); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := s.Commit(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		s.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/entry")
}

// BenchmarkReadSession reads a session's info as every record does.
func BenchmarkReadSession(b *testing.B) {
	s := &SessionInfo{ID: "0b7e4d2c-8a31-4f6e-b5c9-1d2e3f4a5b6c", First: t0, Last: t0.Add(time.Second), Observations: 42,
		Events: 3, Pending: 7, PendingByType: map[memory.Type]int{memory.Semantic: 4, memory.Episodic: 3}, Commits: 2,
		LastCommit: "abcdef0123456789", Source: "claude-code"}
	raw, err := marshalSession(s)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		var got SessionInfo
		if !readSession(raw, &got) {
			b.Fatal("readSession left it to encoding/json")
		}
	}
}
