package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLogRotatesBySize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.log")
	if err := os.WriteFile(path, []byte(strings.Repeat("o", 60)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := OpenLog(path, 100) // the log a daemon before left counts too
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	record := strings.Repeat("r", 29) + "\n"
	for range 5 {
		if _, err := l.Write([]byte(record)); err != nil {
			t.Fatal(err)
		}
	}
	// 61 + 30 fits in 100; the next record moves it aside; three more fit; one more moves
	// that aside in turn.
	for file, want := range map[string]string{path: record, path + ".1": strings.Repeat(record, 3)} {
		got, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s holds %d bytes, want %d: records are never split", filepath.Base(file), len(got), len(want))
		}
	}
}
