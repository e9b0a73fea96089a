package cli_test

import (
	"crypto/rand"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/agmem/agmem/journal"
)

// run runs agmem in dir with extra environment, and returns its stdout, stderr and exit
// code.
func run(t *testing.T, dir string, env []string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd, out, errb := agmemCommand(dir, env, stdin, args...)
	var exit *exec.ExitError
	if err := cmd.Run(); err != nil && !errors.As(err, &exit) {
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

// commands are what an agent and its user run: three that write, then two that read.
var commands = [][]string{{"record", "--jsonl"}, {"flush"}, {"gc"}, {"status"}, {"replay", "--session", "s1"}}

// checkRefused runs a command and asserts what it must do when it cannot use the
// journal: exit 1 (2 would block the agent), one line that says why, one hint, and no
// panic.
func checkRefused(t *testing.T, dir string, args []string, says, hint string) {
	t.Helper()
	_, stderr, code := run(t, dir, nil, observations(2, 1, "after"), args...)
	ls := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if code != 1 || len(ls) != 2 || !strings.HasPrefix(ls[0], "agmem: ") || !strings.Contains(ls[0], says) ||
		!strings.HasPrefix(ls[1], "agmem: hint: ") || !strings.Contains(ls[1], hint) {
		t.Errorf("agmem %s: exit %d, stderr:\n%s\nwant exit 1, a line saying %q and a hint saying %q",
			strings.Join(args, " "), code, stderr, says, hint)
	}
}

// readRaw reads the journal file at path with bbolt alone.
func readRaw(t *testing.T, path string, fn func(*bolt.Tx)) {
	t.Helper()
	db, err := bolt.Open(path, 0, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error { fn(tx); return nil })
}

// usedSize is how much of the journal file its pages take: bbolt grows the file ahead.
func usedSize(t *testing.T, path string) int64 {
	t.Helper()
	var size int64
	readRaw(t, path, func(tx *bolt.Tx) { size = tx.Size() })
	return size
}

// entriesPage is the offset of the page where the journal's tree of entries begins:
// every command reads it.
func entriesPage(t *testing.T, path string) int64 {
	t.Helper()
	var at int64
	readRaw(t, path, func(tx *bolt.Tx) {
		at = int64(tx.Bucket([]byte("entries")).RootPage()) * int64(tx.DB().Info().PageSize)
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
			if out, _, code := run(t, dir, nil, "", "verify"); code != 1 || !strings.Contains(out, "damaged-journal: ") {
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
