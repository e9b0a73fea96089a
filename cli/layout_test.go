package cli_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLayout1RepoReadsBackAfterUpgrade takes a memory repo that the released agmem
// wrote in layout 1 (testdata/layout1, made by its make.sh), with its journal, and
// flushes into it with this agmem: the new files go where layout 2 puts them, nothing
// committed before moves, and every session, one that goes on across the upgrade
// among them, reads back as it was recorded, in the repo and in a fresh clone.
func TestLayout1RepoReadsBackAfterUpgrade(t *testing.T) {
	fixture, err := filepath.Abs("testdata/layout1")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	dir := filepath.Join(work, "mem")
	git(t, work, "clone", "-q", filepath.Join(fixture, "repo.bundle"), dir)
	git(t, dir, "remote", "remove", "origin")
	unzipJournal(t, filepath.Join(fixture, "journal.db.gz"), filepath.Join(dir, ".agmem", "journal.db"))
	before := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
	sessions := []string{"s-old-1", "0b7e4d2c-8a31-4f6e-b5c9-1d2e3f4a5b6c", "s-cont"}
	for _, s := range sessions {
		if got, want := mustAgmem(t, dir, "", "replay", "--json", "--session", s), fixtureFile(t, "replay-"+s+".jsonl"); got != want {
			t.Errorf("replay %s before any new flush:\n%s\nwant what the released agmem replayed:\n%s", s, got, want)
		}
	}

	// s-cont goes on; s-new starts. One of each memory type.
	added := `{"session_id":"s-cont","id":"01JNG31MCR6H8QM6PHFBFSW901","memory_type":"semantic","tool_name":"read_file","timestamp":"2026-04-01T08:00:00Z","arguments":{"path":"after.md"},"result":"read after the upgrade: the semantic file goes by day now","source":"native"}
{"session_id":"s-cont","id":"01JNG31MCR6H8QM6PHFBFSW902","memory_type":"procedural","tool_name":"TodoWrite","timestamp":"2026-04-01T08:01:00Z","arguments":{"path":"plan2.md"},"result":"a plan written after the upgrade, kept by day in procedural","source":"native"}
{"session_id":"s-new","id":"01JNG31MCR6H8QM6PHFBFSW903","memory_type":"episodic","tool_name":"Bash","timestamp":"2026-04-02T10:00:00Z","arguments":{"path":"make"},"result":"make test after the upgrade passed as well, in the new layout","source":"native"}
`
	mustAgmem(t, dir, added, "record", "--jsonl")
	mustAgmem(t, dir, "", "flush")

	// Only additions: the layout file, then the new files where layout 2 puts them.
	changes := git(t, dir, "diff", "--name-status", "--no-renames", before, "HEAD")
	want := []string{
		"A\t.agmem-layout",
		"A\tcurrent/episodic/2026-04-02/10-00-00-Bash-m6phfbfsw903.md",
		"A\tcurrent/procedural/2026-04-01/08-01-00-TodoWrite-m6phfbfsw902.md",
		"A\tcurrent/semantic/2026-04-01/08-00-00-read_file-m6phfbfsw901.md",
	}
	for _, w := range want {
		if !strings.Contains(changes, w+"\n") {
			t.Errorf("the flush's changes lack %q:\n%s", w, changes)
		}
	}
	for _, l := range lines(changes) {
		if l != "A" && !strings.HasPrefix(l, ".agmem-layout") && !strings.HasPrefix(l, "current/") && !strings.HasPrefix(l, "sessions/") {
			t.Errorf("the flush changed %q: agmem only adds", l)
		}
	}
	if got := git(t, dir, "show", "HEAD:.agmem-layout"); got != "2\n" {
		t.Errorf(".agmem-layout holds %q, want 2", got)
	}
	if !strings.Contains(changes, "A\tsessions/") || !strings.Contains(git(t, dir, "ls-files", "sessions"), "/s-cont/") {
		t.Errorf("no layout 2 record of s-cont:\n%s", changes)
	}
	for _, l := range lines(git(t, dir, "ls-files", "sessions")) {
		if parts := strings.Split(l, "/"); len(parts) == 4 && len(parts[1]) != 2 {
			t.Errorf("%s: a layout 2 record outside a bucket", l)
		}
	}

	// Every session reads back, here and in a fresh clone: s-cont from both layouts.
	contWant := fixtureFile(t, "replay-s-cont.jsonl")
	var contNew []string
	for _, l := range jsonLines(added) {
		if strings.Contains(l, `"s-cont"`) {
			contNew = append(contNew, l)
		}
	}
	clone := filepath.Join(work, "clone")
	git(t, work, "clone", "-q", dir, clone)
	mustAgmem(t, clone, "", "init", ".")
	for _, repo := range []string{dir, clone} {
		for _, s := range sessions[:2] {
			if got, want := mustAgmem(t, repo, "", "replay", "--json", "--session", s), fixtureFile(t, "replay-"+s+".jsonl"); got != want {
				t.Errorf("%s: replay %s after the upgrade:\n%s\nwant:\n%s", repo, s, got, want)
			}
		}
		got := jsonLines(mustAgmem(t, repo, "", "replay", "--json", "--session", "s-cont"))
		if len(got) != 3 || got[0]+"\n" != contWant {
			t.Fatalf("%s: replay s-cont = %q; want its old entry, then the 2 new", repo, got)
		}
		for i, l := range contNew {
			if !sameJSONMembers(t, got[i+1], l, "id", "tool_name", "memory_type", "result") {
				t.Errorf("%s: replay s-cont entry %d = %s, want %s", repo, i+1, got[i+1], l)
			}
		}
		if out := mustAgmem(t, repo, "", "sessions", "--all"); strings.Count(out, "\n") != 5 {
			t.Errorf("%s: sessions --all:\n%s\nwant a header and 4 sessions", repo, out)
		}
		// Search cites old and new files by the paths their commits hold.
		for query, path := range map[string]string{
			"flat semantic directory":         "current/semantic/read_file-m6phfbfsw804.md",
			`"semantic file goes by day now"`: "current/semantic/2026-04-01/08-00-00-read_file-m6phfbfsw901.md",
		} {
			var hit struct{ Commit, Path string }
			out := mustAgmem(t, repo, "", "search", "--json", "--limit", "1", query)
			if err := json.Unmarshal([]byte(out), &hit); err != nil || hit.Path != path || hit.Commit == "" {
				t.Errorf("%s: search %s = %s (%v); want %s with its commit", repo, query, out, err, path)
				continue
			}
			git(t, repo, "cat-file", "-e", hit.Commit+":"+path)
		}
		if out := mustAgmem(t, repo, "", "verify"); !strings.Contains(out, "consistent") {
			t.Errorf("%s: verify: %s", repo, out)
		}
		mustAgmem(t, repo, "", "audit")
	}
	mustAgmem(t, dir, "", "gc")
	if got := jsonLines(mustAgmem(t, dir, "", "replay", "--json", "--session", "s-cont")); len(got) != 3 {
		t.Errorf("after gc, replay s-cont = %q", got)
	}
	checkRepoSettled(t, dir)
}

func jsonLines(s string) []string { return strings.Split(strings.TrimSpace(s), "\n") }

func fixtureFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata/layout1", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func unzipJournal(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := out.ReadFrom(zr); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sameJSONMembers says whether two JSON objects agree on the given members.
func sameJSONMembers(t *testing.T, a, b string, keys ...string) bool {
	t.Helper()
	var x, y map[string]any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if x[k] != y[k] {
			return false
		}
	}
	return true
}
