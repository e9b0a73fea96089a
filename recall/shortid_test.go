package recall

import (
	"strings"
	"testing"

	"github.com/agmem/agmem/memory"
)

// newIndex is an empty index of a test's own, closed when the test ends.
func newIndex(t *testing.T) *Index {
	t.Helper()
	ix, err := OpenIndex(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// TestShortIDOfIsShortID: the short id SQL computes, which a lookup by short id checks
// its rows by, is the one Go gives (memory.ShortID, lower case) for every
// kind of id the index can hold.
func TestShortIDOfIsShortID(t *testing.T) {
	ix := newIndex(t)
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

// TestIDNames: an id, whole or short, in any case, has one short name, which a lookup
// by short id reads; a whole id's name, which a lookup by whole id reads, is its own
// but where another id shares its short id and is a ULID.
func TestIDNames(t *testing.T) {
	ids := []string{
		"01ARZ3NDEKTSV4RRFFQ69G5FAV",
		"123e4567-e89b-42d3-a456-426614174000",
		"123E4567-E89B-72d3-a456-426614174001", // a UUIDv7 of the same millisecond: one short id
		"toolu_01AAAAAAAAAAAAAAAAAAAAA1",
		"toolu_01AAAAAAAAAAAAAAAAAAAAA2",
		"a-b-c",
	}
	shorts, wholes := map[uint64]string{}, map[uint64]string{}
	for _, id := range ids {
		for _, same := range []string{strings.ToLower(id), strings.ToUpper(id), memory.ShortID(id), shortID(id)} {
			if shortName(same) != shortName(id) {
				t.Errorf("%s: %s has another short name", id, same)
			}
		}
		if other, ok := shorts[shortName(id)]; ok && shortID(other) != shortID(id) {
			t.Errorf("%s and %s have one short name", other, id)
		}
		if other, ok := wholes[wholeName(id)]; ok {
			t.Errorf("%s and %s have one whole name", other, id)
		}
		shorts[shortName(id)], wholes[wholeName(id)] = id, id
	}
}

// TestIDLookupsSearchTheRows: a lookup of the rows an id's name gives reads those rows,
// never the whole table (entries' ids have no index).
func TestIDLookupsSearchTheRows(t *testing.T) {
	ix := newIndex(t)
	for _, cond := range []string{`e.id = ?`, shortIDOf("e.id") + ` = ?`} {
		query := namedQuery(cond, 2)
		rows, err := ix.db.Query(`EXPLAIN QUERY PLAN `+query, "01ARZ3NDEKTSV4RRFFQ69G5FAV", 1, 2)
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
		if !strings.HasPrefix(plan[0], "SEARCH e USING INTEGER PRIMARY KEY") {
			t.Errorf("%s\nplans %q, want a search of entries by rowid first", query, plan)
		}
	}
}
