package recall

import (
	"slices"
	"strings"
	"testing"
)

// TestShortIDOfIsShortID: the short id SQL computes, which entries_short indexes and
// lookups by short id name, is the one Go gives (memory.ShortID, lower case) for every
// kind of id the index can hold.
func TestShortIDOfIsShortID(t *testing.T) {
	ix, err := OpenIndex(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for _, id := range []string{
		"01ARZ3NDEKTSV4RRFFQ69G5FAV",           // a ULID, as agmem writes them
		"01arz3ndektsv4rrffq69g5fav",           // one in lower case, in a fetched record
		"123e4567-e89b-42d3-a456-426614174000", // a UUID, as the Python agmem writes them
		"123E4567-E89B-42D3-A456-426614174000",
		"a-b-c", // no id agmem writes, but a fetched record may hold it
	} {
		var got string
		if err := ix.db.QueryRow(`WITH t(id) AS (VALUES (?)) SELECT `+shortIDOf("id")+` FROM t`, id).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if want := shortID(id); got != want {
			t.Errorf("%s: SQL says %q, Go %q", id, got, want)
		}
	}
}

// TestByIDSearchesShortIndex: a lookup by whole id searches entries_short, never the
// whole table (entries' ids have no index of their own).
func TestByIDSearchesShortIndex(t *testing.T) {
	ix, err := OpenIndex(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for _, query := range []string{
		`SELECT rowid FROM entries WHERE ` + byID("id"),
		`SELECT ` + refColumns + ` FROM ` + refFrom + ` WHERE ` + byID("e.id"),
	} {
		rows, err := ix.db.Query(`EXPLAIN QUERY PLAN `+query, "01ARZ3NDEKTSV4RRFFQ69G5FAV")
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		if !slices.ContainsFunc(plan, func(d string) bool { return strings.HasPrefix(d, "SEARCH e") && strings.Contains(d, "entries_short") }) {
			t.Errorf("%s\nplans %q, want a search of entries_short", query, plan)
		}
	}
}
