// Package recalltest owns what tests of the readers of the search index share: another
// update's hold on the index, which a reader must not wait for past its time, and an
// index that no update can write.
package recalltest

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/agmem/agmem/recall"
)

// HoldWriteLock takes the write lock of the index in stateDir, as another update (a
// rebuild in the background) holds it, and returns what lets it go; the test's end lets
// it go too.
func HoldWriteLock(t testing.TB, stateDir string) (release func()) {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(stateDir, recall.IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := db.Conn(ctx) // the BEGIN and the ROLLBACK on one connection
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		conn.Close()
		db.Close()
		t.Fatal(err)
	}
	released := false
	release = func() {
		if !released {
			released = true
			conn.ExecContext(ctx, "ROLLBACK")
			conn.Close()
			db.Close()
		}
	}
	t.Cleanup(release)
	return release
}

// BreakSegments puts a file where the index in stateDir keeps its segments, which must
// be there, so that an update that writes one fails, and returns what puts them back.
func BreakSegments(t testing.TB, stateDir string) (mend func()) {
	t.Helper()
	dir := filepath.Join(stateDir, recall.SegmentsDir)
	if err := os.Rename(dir, dir+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	return func() {
		t.Helper()
		if err := os.Remove(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(dir+".away", dir); err != nil {
			t.Fatal(err)
		}
	}
}
