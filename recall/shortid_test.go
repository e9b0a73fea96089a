package recall

import (
	"strings"
	"testing"
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

// TestShortIDOfIsShortID: the short id SQL computes, which entries_short indexes and
// lookups by short id name, is the one Go gives (memory.ShortID, lower case) for every
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

// TestIDKeys: an id's key in entries_id starts with its short id, and ids that are not
// ULIDs have keys of their own when their short ids are one.
func TestIDKeys(t *testing.T) {
	ix := newIndex(t)
	keys := map[string]string{}
	for _, id := range []string{
		"01ARZ3NDEKTSV4RRFFQ69G5FAV",
		"123e4567-e89b-42d3-a456-426614174000",
		"123E4567-E89B-72d3-a456-426614174001", // a UUIDv7 of the same millisecond
		"toolu_01AAAAAAAAAAAAAAAAAAAAA1",
		"toolu_01AAAAAAAAAAAAAAAAAAAAA2",
	} {
		var key string
		if err := ix.db.QueryRow(`WITH t(id) AS (VALUES (?)) SELECT `+idKeyOf("id")+` FROM t`, id).Scan(&key); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(key, shortID(id)) {
			t.Errorf("%s: key %q does not start with its short id %q", id, key, shortID(id))
		}
		if other, ok := keys[key]; ok {
			t.Errorf("%s and %s have one key, %q", other, id, key)
		}
		keys[key] = id
	}
}

// TestIDLookupsSearchTheIndex: a lookup by whole id, or by short id, searches
// entries_id, never the whole table (entries' ids have no index of their own).
func TestIDLookupsSearchTheIndex(t *testing.T) {
	ix := newIndex(t)
	for _, query := range []string{
		`SELECT rowid FROM entries WHERE ` + byID("id"),
		`SELECT ` + refColumns + ` FROM ` + refFrom + ` WHERE ` + byID("e.id"),
		`SELECT ` + refColumns + ` FROM ` + refFrom + ` WHERE ` + byShortID("e.id") + ` ORDER BY e.ts LIMIT 10`,
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
		if !strings.HasPrefix(plan[0], "SEARCH ") || !strings.Contains(plan[0], "USING INDEX entries_id ") {
			t.Errorf("%s\nplans %q, want a search of entries_id first", query, plan)
		}
	}
}
