// Package recalltest owns what tests of the readers of the search index share: another
// update's hold on the index, which a reader must not wait for past its time.
package recalltest

import (
	"context"
	"database/sql"
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
