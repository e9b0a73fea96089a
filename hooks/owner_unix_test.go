//go:build unix

package hooks

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A file agmem changes as root ("sudo agmem hooks install", as a user's own setup
// script may run it) stays its owner's, and its backup is that owner's too; a file it
// makes, and the directories it makes for it, are their directory's owner's. A file
// made read-only is left alone.
func TestEditKeepsTheFilesOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root gives a file to another user")
	}
	const nobody = 65534
	dir := t.TempDir()
	if err := os.Chown(dir, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(settings, []byte("v1"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chown(settings, nobody, nobody)
	backup, err := Edit{Path: settings, Old: []byte("v1"), New: []byte("v2")}.Write()
	if err != nil {
		t.Fatal(err)
	}
	made := filepath.Join(dir, "sub", "mcp.json")
	if _, err := (Edit{Path: made, New: []byte("{}")}).Write(); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{settings, backup, made, filepath.Dir(made)} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != nobody || st.Gid != nobody {
			t.Errorf("%s is owned by %d:%d, not nobody's", path, st.Uid, st.Gid)
		}
	}

	readOnly := filepath.Join(dir, "config.toml")
	os.WriteFile(readOnly, []byte("v1"), 0o444)
	if _, err := (Edit{Path: readOnly, Old: []byte("v1"), New: []byte("v2")}).Write(); !errors.Is(err, ErrUnreadable) {
		t.Errorf("a read-only file: %v", err)
	}
	if got, _ := os.ReadFile(readOnly); string(got) != "v1" {
		t.Errorf("the read-only file was changed: %q", got)
	}
}
