package recall

import (
	"context"
	"encoding/json"
	"hash/maphash"
	"slices"
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

// A rebuild adds its rows with no index of entries but entries_pending, and makes the
// others when it commits; one rolled back leaves them as they were. An entry whose id's
// hash names another's row meanwhile is found by a search of the table, not added again.
func TestRebuildMakesEntriesIndexes(t *testing.T) {
	ix := newIndex(t)
	want := []string{"entries_id", "entries_pending", "entries_session"}
	indexes := func(when string) {
		t.Helper()
		rows, err := ix.db.Query(`SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'entries'
			AND name NOT LIKE 'sqlite_%' ORDER BY name`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var got []string
		for rows.Next() {
			var name string
			rows.Scan(&name)
			got = append(got, name)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: indexes of entries %v, want %v", when, got, want)
		}
	}
	call := func(id, result string) memory.Entry {
		return memory.Entry{Observation: &memory.Observation{ID: id, SessionID: "s1",
			Timestamp: time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC), ToolName: "Bash", MemoryType: memory.Episodic,
			Arguments: json.RawMessage(`{"command":"make"}`), Result: json.RawMessage(`"` + result + `"`), Summary: "Bash make"}}
	}
	a, b := "01KBG9Q1C01Y7B9DSBDR69X25K", "01KBG9Q1C01Y7B9DSBDR69X25M"
	for _, commit := range []bool{false, true} {
		w, err := ix.writer(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range []memory.Entry{call(a, "one"), call(b, "two")} {
			if err := w.add(e, place{origin: Local}); err != nil {
				t.Fatal(err)
			}
		}
		if !commit {
			w.rollback()
			indexes("after a rebuild rolled back")
			continue
		}
		w.added[maphash.String(w.seed, b)] = w.added[maphash.String(w.seed, a)]
		if err := w.add(call(b, "two, answered at last"), place{origin: Local}); err != nil {
			t.Fatal(err)
		}
		if err := w.commit(); err != nil {
			t.Fatal(err)
		}
		indexes("after a rebuild")
	}
	var rows int
	if err := ix.db.QueryRow(`SELECT count(*) FROM entries WHERE id = ?`, b).Scan(&rows); err != nil || rows != 1 {
		t.Errorf("%d rows of %s (%v), want 1", rows, b, err)
	}
}
