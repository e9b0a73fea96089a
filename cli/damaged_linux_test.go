package cli_test

import (
	"encoding/hex"
	"errors"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadOnlyJournal makes the journal file immutable, then the whole memory repo a
// read-only mount (root ignores permission bits, so chmod would prove nothing here).
func TestReadOnlyJournal(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chattr +i and mount need root")
	}
	t.Run("file", func(t *testing.T) {
		dir := t.TempDir()
		ids := recordedRepo(t, dir)
		path := filepath.Join(dir, ".agmem", "journal.db")
		if out, err := exec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
			t.Skipf("chattr +i is not possible here: %v: %s", err, out)
		}
		t.Cleanup(func() { exec.Command("chattr", "-i", path).Run() })
		for _, args := range commands[:3] {
			checkRefused(t, dir, args, "journal is read-only", "writable")
		}
		// Reading needs no writing: what was recorded is all there.
		mustAgmem(t, dir, "", "status")
		if out := mustAgmem(t, dir, "", "replay", "--session", "s1", "--json"); countLines(out) != 60 {
			t.Errorf("replay of a read-only journal: %d observations, want 60", countLines(out))
		}
		exec.Command("chattr", "-i", path).Run()
		mustAgmem(t, dir, "", "flush")
		checkExactlyOnce(t, dir, ids)
	})
	t.Run("mount", func(t *testing.T) {
		dir := t.TempDir()
		ids := recordedRepo(t, dir)
		if err := syscall.Mount(dir, dir, "", syscall.MS_BIND, ""); err != nil {
			t.Skipf("a bind mount is not possible here: %v", err)
		}
		t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
		if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, ""); err != nil {
			t.Fatalf("remount read-only: %v", err)
		}
		for _, args := range commands[:3] {
			checkRefused(t, dir, args, "read-only", "writable")
		}
		// Reading needs no writing, not even of a lock file.
		mustAgmem(t, dir, "", "status")
		if out := mustAgmem(t, dir, "", "replay", "--session", "s1", "--json"); countLines(out) != 60 {
			t.Errorf("replay of a read-only memory repo: %d observations, want 60", countLines(out))
		}
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Fatal(err)
		}
		mustAgmem(t, dir, "", "flush")
		checkExactlyOnce(t, dir, ids)
	})
}

// TestFullDisk fills the disk that holds a memory repo (a small tmpfs): a record that
// needs room fails and says so, and once there is room again, every observation
// acknowledged before is still there and one flush commits each exactly once.
func TestFullDisk(t *testing.T) {
	disk := t.TempDir()
	if err := syscall.Mount("tmpfs", disk, "tmpfs", 0, "size=8m"); err != nil {
		t.Skipf("mounting a small tmpfs is not possible here (it needs root): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(disk, syscall.MNT_DETACH) })
	dir := filepath.Join(disk, "repo")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ids := recordedRepo(t, dir)

	filler := filepath.Join(disk, "filler")
	fill(t, filler)
	// Random text: the journal compresses entries, and a repeated letter would fit in
	// the room it already has.
	noise := make([]byte, 512<<10)
	rand.New(rand.NewSource(1)).Read(noise)
	big := `{"tool_name":"Read","arguments":{"path":"big"},"result":"` + hex.EncodeToString(noise) + `","session_id":"s1"}`
	_, stderr, code := run(t, dir, nil, big, "record")
	ls := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if code != 1 || len(ls) != 2 || !strings.Contains(ls[0], "no space left") || !strings.Contains(ls[1], "free some space") {
		t.Fatalf("record on a full disk: exit %d, stderr:\n%s\nwant exit 1, no space left, and a hint", code, stderr)
	}
	_, stderr, code = run(t, dir, nil, "", "flush")
	if ls := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n"); code != 1 || len(ls) != 2 || !strings.HasPrefix(ls[1], "agmem: hint: ") {
		t.Errorf("flush on a full disk: exit %d, stderr:\n%s\nwant exit 1, one line and a hint", code, stderr)
	}
	mustAgmem(t, dir, "", "status")

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	ids = append(ids, lines(mustAgmem(t, dir, observations(3, 1, "room"), "record", "--jsonl"))...)
	mustAgmem(t, dir, "", "flush")
	checkExactlyOnce(t, dir, ids)
}

// fill writes path until its disk is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return
		}
	}
}
