//go:build linux

package cli_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/agmem/agmem/journal"
)

// run runs agmem in dir and returns its stdout, stderr and exit code.
func run(t *testing.T, dir, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command("agmem", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(dir)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// recordedRepo makes a memory repo in dir with history in git and observations still
// pending, and returns the ids of all of them.
func recordedRepo(t *testing.T, dir string) []string {
	t.Helper()
	mustAgmem(t, dir, "", "init", ".")
	ids := lines(mustAgmem(t, dir, observations(120, 3, "flushed"), "record", "--jsonl"))
	mustAgmem(t, dir, "", "flush")
	return append(ids, lines(mustAgmem(t, dir, observations(60, 3, "pending"), "record", "--jsonl"))...)
}

// commands are what an agent and its user run: two that write, then two that read.
var commands = [][]string{{"record", "--jsonl"}, {"flush"}, {"status"}, {"replay", "--session", "s1"}}

// checkRefused runs a command and asserts what it must do when it cannot use the
// journal: exit 1 (2 would block the agent), one line that says why, one hint, and no
// panic.
func checkRefused(t *testing.T, dir string, args []string, says, hint string) {
	t.Helper()
	_, stderr, code := run(t, dir, observations(2, 1, "after"), args...)
	ls := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if code != 1 || len(ls) != 2 || !strings.HasPrefix(ls[0], "agmem: ") || !strings.Contains(ls[0], says) ||
		!strings.HasPrefix(ls[1], "agmem: hint: ") || !strings.Contains(ls[1], hint) {
		t.Errorf("agmem %s: exit %d, stderr:\n%s\nwant exit 1, a line saying %q and a hint saying %q",
			strings.Join(args, " "), code, stderr, says, hint)
	}
}

// usedSize is how much of the journal file its pages take: bbolt grows the file ahead.
func usedSize(t *testing.T, path string) int64 {
	t.Helper()
	db, err := bolt.Open(path, 0, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var size int64
	db.View(func(tx *bolt.Tx) error { size = tx.Size(); return nil })
	return size
}

// entriesPage is the offset of the page where the journal's tree of entries begins:
// every command reads it.
func entriesPage(t *testing.T, path string) int64 {
	t.Helper()
	db, err := bolt.Open(path, 0, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var at int64
	db.View(func(tx *bolt.Tx) error {
		at = int64(tx.Bucket([]byte("entries")).RootPage()) * int64(db.Info().PageSize)
		return nil
	})
	if at == 0 {
		t.Fatal("the entries are inline in their bucket: too few for this test")
	}
	return at
}

func countLines(s string) int { return strings.Count(s, "\n") }

func garbageAt(t *testing.T, path string, offset int64, n int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	garbage := make([]byte, n)
	rand.Read(garbage)
	if _, err := f.WriteAt(garbage, offset); err != nil {
		t.Fatal(err)
	}
}

func cutTo(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

// TestDamagedJournal damages a real journal in the ways a disk, a crash or a person can,
// and checks that every command says so and how to go on, and that moving the journal
// aside, as the hint says, loses nothing that is in git.
func TestDamagedJournal(t *testing.T) {
	page := int64(os.Getpagesize())
	damaged, upgrade := `"agmem verify"`, "upgrade agmem"
	for _, c := range []struct {
		name       string
		damage     func(t *testing.T, path string)
		says, hint string
		works      string // a command that reads no damaged page, and so still works
	}{
		{"cut to nothing", func(t *testing.T, path string) { cutTo(t, path, 0) }, "journal is damaged", damaged, ""},
		{"cut to one page", func(t *testing.T, path string) { cutTo(t, path, page) }, "journal is damaged", damaged, ""},
		{"cut to half its pages", func(t *testing.T, path string) { cutTo(t, path, usedSize(t, path)/2) }, "journal is damaged", damaged, ""},
		{"garbage over the meta pages", func(t *testing.T, path string) { garbageAt(t, path, 0, int(2*page)) }, "journal is damaged", damaged, ""},
		{"garbage over the page where the entries begin", func(t *testing.T, path string) {
			garbageAt(t, path, entriesPage(t, path), int(page))
		}, "journal is damaged", damaged, "status"},
		{"written by a newer agmem", func(t *testing.T, path string) {
			db, err := bolt.Open(path, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			db.Update(func(tx *bolt.Tx) error {
				return tx.Bucket([]byte("meta")).Put([]byte("schema"), []byte(strconv.Itoa(journal.SchemaVersion+1)))
			})
		}, "journal was written by a newer agmem", upgrade, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			recordedRepo(t, dir)
			path := filepath.Join(dir, ".agmem", "journal.db")
			c.damage(t, path)
			for _, args := range commands {
				if args[0] == c.works {
					mustAgmem(t, dir, "", args...)
				} else {
					checkRefused(t, dir, args, c.says, c.hint)
				}
			}
			if c.hint != damaged {
				checkRefused(t, dir, []string{"verify"}, c.says, c.hint)
				return
			}
			if out, _, code := run(t, dir, "", "verify"); code != 1 || !strings.Contains(out, "damaged-journal: ") {
				t.Errorf("agmem verify: exit %d, stdout:\n%s\nwant exit 1 and what is damaged", code, out)
			}
			if err := os.Rename(path, path+".damaged"); err != nil {
				t.Fatal(err)
			}
			if out := mustAgmem(t, dir, "", "replay", "--session", "s1", "--json"); countLines(out) != 40 {
				t.Errorf("replay from git after the journal was moved aside: %d observations, want the 40 flushed", len(lines(out)))
			}
			mustAgmem(t, dir, observations(2, 1, "again"), "record", "--jsonl")
		})
	}
}

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
		for _, args := range commands[:2] {
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
		for _, args := range commands {
			checkRefused(t, dir, args, "read-only", "writable")
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
	big := `{"tool_name":"Read","arguments":{"path":"big"},"result":"` + strings.Repeat("x", 1<<20) + `","session_id":"s1"}`
	_, stderr, code := run(t, dir, big, "record")
	ls := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if code != 1 || len(ls) != 2 || !strings.Contains(ls[0], "no space left") || !strings.Contains(ls[1], "free some space") {
		t.Fatalf("record on a full disk: exit %d, stderr:\n%s\nwant exit 1, no space left, and a hint", code, stderr)
	}
	_, stderr, code = run(t, dir, "", "flush")
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
