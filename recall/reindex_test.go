package recall

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/agmem/agmem/internal/fulltext"
	"github.com/agmem/agmem/memory"
)

// An entry indexed twice in one update (a call read from a commit and then, answered,
// from the journal; or read in one chunk of the journal and, answered meanwhile, in the
// next) is found once, by its words of the second time.
func TestReindexedInOneUpdateIsFoundOnce(t *testing.T) {
	ix := newIndex(t)
	w, err := ix.writer(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer w.rollback()
	call := func(result string) memory.Entry {
		return memory.Entry{Observation: &memory.Observation{ID: "01KBG9Q1C01Y7B9DSBDR69X25K", SessionID: "s1",
			Timestamp: time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC), ToolName: "Bash", MemoryType: memory.Episodic,
			Arguments: json.RawMessage(`{"command":"make zebra"}`), Result: json.RawMessage(`"` + result + `"`), Summary: "Bash make zebra"}}
	}
	for _, result := range []string{"the first report of the zebra call", "the zebra call answered, with a longer result: okapi"} {
		if err := w.add(call(result), place{origin: Local}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.commit(); err != nil {
		t.Fatal(err)
	}
	if err := ix.loadSegments(); err != nil {
		t.Fatal(err)
	}
	for text, want := range map[string]int{"zebra": 1, "okapi": 1, "first": 0} {
		q, err := fulltext.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		res, err := ix.search(q, fulltext.Options{Weights: weights, Limit: 10})
		if err != nil || len(res.Hits) != want {
			t.Errorf("%s: %d hits, want %d (%v)", text, len(res.Hits), want, err)
		}
	}
}
