package recall

import "testing"

// An index is made in WAL mode, so that a search reads while an update writes, and
// stays so when opened again, which no longer sets it.
func TestIndexInWALMode(t *testing.T) {
	dir := t.TempDir()
	for _, when := range []string{"made", "opened again"} {
		ix, err := OpenIndex(dir)
		if err != nil {
			t.Fatal(err)
		}
		var mode string
		if err := ix.db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		ix.Close()
		if mode != "wal" {
			t.Errorf("%s: journal mode %q", when, mode)
		}
	}
}
