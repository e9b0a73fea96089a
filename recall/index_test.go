package recall_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agmem/agmem/flush"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/maintain"
	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/recall"
	"github.com/agmem/agmem/recall/recalltest"
	"github.com/agmem/agmem/record"
	"github.com/agmem/agmem/vcs"
)

// memRepo is a memory repo made for a test, with what was recorded into it.
type memRepo struct {
	t    *testing.T
	repo memrepo.Repo
}

func newMemRepo(t *testing.T) *memRepo {
	t.Helper()
	t.Setenv("GIT_AUTHOR_NAME", "Ana Test")
	t.Setenv("GIT_AUTHOR_EMAIL", "ana@example.com")
	t.Setenv("GIT_COMMITTER_NAME", "Ana Test")
	t.Setenv("GIT_COMMITTER_EMAIL", "ana@example.com")
	repo, _, err := maintain.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &memRepo{t: t, repo: repo}
}

// record records inputs in session.
func (m *memRepo) record(session string, inputs ...record.Input) record.Outcome {
	m.t.Helper()
	r, err := record.Open(m.repo.Root, record.Options{Session: session, Getenv: func(string) string { return "" }})
	if err != nil {
		m.t.Fatal(err)
	}
	out, err := r.Record(inputs...)
	if err != nil || len(out.Refused) > 0 {
		m.t.Fatalf("record: %v %v", err, out.Refused)
	}
	return out
}

// hook records an agent's hook payload, as its hooks give it.
func (m *memRepo) hook(agent, payload string) {
	m.t.Helper()
	r, err := record.Open(m.repo.Root, record.Options{Agent: agent, Getenv: func(string) string { return "" }})
	if err != nil {
		m.t.Fatal(err)
	}
	if out, err := r.Payload([]byte(payload)); err != nil || len(out.Refused) > 0 {
		m.t.Fatalf("record %s: %v %v", payload, err, out.Refused)
	}
}

func (m *memRepo) flush() {
	m.t.Helper()
	git, err := vcs.Open(m.repo.Root)
	if err != nil {
		m.t.Fatal(err)
	}
	if _, err := flush.Run(m.repo.StateDir(), m.repo.Journal(), git, flush.Options{}); err != nil {
		m.t.Fatal(err)
	}
}

// git opens the repo's git.
func (m *memRepo) git() *vcs.Git {
	m.t.Helper()
	git, err := vcs.Open(m.repo.Root)
	if err != nil {
		m.t.Fatal(err)
	}
	return git
}

// update brings the index up to date, as the end of agmem flush does.
func (m *memRepo) update() {
	m.t.Helper()
	git, err := vcs.Open(m.repo.Root)
	if err != nil {
		m.t.Fatal(err)
	}
	if _, err := recall.UpdateIndex(m.repo.StateDir(), git, m.repo.Journal()); err != nil {
		m.t.Fatal(err)
	}
}

func (m *memRepo) open() *recall.Memory {
	m.t.Helper()
	mem, err := recall.Open(context.Background(), m.repo)
	if err != nil {
		m.t.Fatal(err)
	}
	m.t.Cleanup(func() { mem.Close() })
	return mem
}

// indexDB is the index's SQLite file, opened behind the index's back, to read what it
// holds or damage it; the test's end closes it.
func (m *memRepo) indexDB() *sql.DB {
	m.t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(m.repo.StateDir(), recall.IndexFile))
	if err != nil {
		m.t.Fatal(err)
	}
	m.t.Cleanup(func() { db.Close() })
	return db
}

// execIndex runs stmt on the index's SQLite file, and closes it again.
func (m *memRepo) execIndex(stmt string) {
	m.t.Helper()
	db := m.indexDB()
	defer db.Close()
	if _, err := db.Exec(stmt); err != nil {
		m.t.Fatal(err)
	}
}

// search opens the memory, searches it, and closes it again.
func (m *memRepo) search(q recall.Query) recall.Results {
	m.t.Helper()
	mem, err := recall.Open(context.Background(), m.repo)
	if err != nil {
		m.t.Fatal(err)
	}
	defer mem.Close()
	res, err := mem.Search(q)
	if err != nil {
		m.t.Fatalf("search %q: %v", q.Text, err)
	}
	return res
}

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func call(tool, id string, at time.Duration, args map[string]any, result string) record.Observation {
	return record.Observation{Tool: tool, ToolUseID: id, Time: t0.Add(at), Arguments: args, Result: result,
		Cwd: "/home/ana/shop", Source: "claude-code"}
}

func TestSearchFindsCommittedAndPending(t *testing.T) {
	m := newMemRepo(t)
	m.record("s1",
		record.Event{Name: "UserPromptSubmit", Text: "make the checkout tests pass", Time: t0},
		call("Read", "t1", time.Second, map[string]any{"file_path": "/home/ana/shop/src/cart.ts"},
			"export function cartTotal(items) { return items.reduce((s, i) => s + i.price, 0) }"),
		call("Bash", "t2", 2*time.Second, map[string]any{"command": "npm test"},
			"FAIL src/checkout.test.ts: expected total 42, received 41 after the discount was applied twice"),
	)
	m.flush()
	m.record("s1", call("Edit", "t3", 3*time.Second, map[string]any{"file_path": "/home/ana/shop/src/discount.ts"},
		"applied the discount once in discount.ts, where it was applied twice before this edit"))

	res := m.search(recall.Query{Text: "discount"})
	if len(res.Hits) != 2 {
		t.Fatalf("%d hits for discount, want 2: %+v", len(res.Hits), res.Hits)
	}
	byTool := map[string]recall.Hit{}
	for _, h := range res.Hits {
		byTool[h.Tool] = h
		if !strings.Contains(h.Snippet, "**discount**") {
			t.Errorf("%s: snippet %q does not mark the match", h.Tool, h.Snippet)
		}
	}
	if b := byTool["Bash"]; b.Commit == "" || !strings.HasPrefix(b.Path, "current/episodic/") {
		t.Errorf("the committed call is not cited with its commit and path: %+v", b)
	}
	if e := byTool["Edit"]; e.Commit != "" || e.Path != "" {
		t.Errorf("the pending call cites %q %q", e.Commit, e.Path)
	}
	// The committed call's snippet is cut from its markdown file, found by the start of
	// its blob's hash that the index keeps.
	if texts := recall.ShownOf(m.open(), byTool["Bash"].Ref); !strings.Contains(strings.Join(texts, "\n"), "the discount was applied") {
		t.Errorf("the committed call's markdown file is not read: %q", texts)
	}
	// Where no pack holds it (a loose object, as git writes a small fetch), the snippet
	// is cut from the session record instead, and reads the same.
	unpackObjects(t, m.repo.Root)
	if texts := recall.ShownOf(m.open(), byTool["Bash"].Ref); texts != nil {
		t.Errorf("a loose markdown file is read by the start of its hash: %q", texts)
	}
	for _, h := range m.search(recall.Query{Text: "discount"}).Hits {
		if h.Tool == "Bash" && h.Snippet != byTool["Bash"].Snippet {
			t.Errorf("the snippet from the record: %q; from the markdown file: %q", h.Snippet, byTool["Bash"].Snippet)
		}
	}
	// A prompt is found too; a filter keeps it out.
	if res := m.search(recall.Query{Text: "checkout"}); len(res.Hits) != 2 {
		t.Errorf("%d hits for checkout (the prompt and the test run), want 2", len(res.Hits))
	}
	if res := m.search(recall.Query{Text: "checkout", Tool: "Bash"}); len(res.Hits) != 1 {
		t.Errorf("%d hits for checkout in Bash, want 1", len(res.Hits))
	}
	// After a flush the pending call is placed in its commit.
	m.flush()
	res = m.search(recall.Query{Text: "discount.ts"})
	if len(res.Hits) == 0 || res.Hits[0].Commit == "" {
		t.Fatalf("after the flush: %+v", res.Hits)
	}
}

// unpackObjects makes every object of the repo at root loose, as git unpack-objects
// writes them, and removes the packs.
func unpackObjects(t *testing.T, root string) {
	t.Helper()
	packs, err := filepath.Glob(filepath.Join(root, ".git", "objects", "pack", "pack-*.pack"))
	if err != nil || len(packs) == 0 {
		t.Fatalf("no packs: %v", err)
	}
	for _, p := range packs {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, ext := range []string{".pack", ".idx", ".rev"} {
			if err := os.Remove(strings.TrimSuffix(p, ".pack") + ext); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
		}
		cmd := exec.Command("git", "-C", root, "unpack-objects", "-q")
		cmd.Stdin = bytes.NewReader(data)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git unpack-objects: %v\n%s", err, out)
		}
	}
}

// Deleting the index, or damaging it, loses nothing: it is made anew from git and
// the journal, without an error.
func TestIndexMadeAnew(t *testing.T) {
	m := newMemRepo(t)
	m.record("s1", call("Bash", "t1", 0, map[string]any{"command": "go test ./..."},
		"ok  	github.com/agmem/agmem/recall	0.412s and every other package passed too"))
	m.flush()
	if res := m.search(recall.Query{Text: "recall"}); len(res.Hits) != 1 {
		t.Fatalf("%d hits", len(res.Hits))
	}
	path := filepath.Join(m.repo.StateDir(), recall.IndexFile)
	segments := func() []string {
		files, _ := filepath.Glob(filepath.Join(m.repo.StateDir(), recall.SegmentsDir, "*.seg"))
		if len(files) == 0 {
			t.Fatal("no segment files")
		}
		return files
	}
	for name, damage := range map[string]func(){
		"segment deleted":   func() { os.Remove(segments()[0]) },
		"segment truncated": func() { os.Truncate(segments()[0], 100) },
		"segment garbage":   func() { os.WriteFile(segments()[0], []byte("not a segment at all"), 0o644) },
		"segment a directory": func() {
			seg := segments()[0]
			os.Remove(seg)
			os.Mkdir(seg, 0o755)
		},
		"segment a pipe": func() {
			seg := segments()[0]
			os.Remove(seg)
			if out, err := exec.Command("mkfifo", seg).CombinedOutput(); err != nil {
				t.Fatalf("mkfifo: %v %s", err, out)
			}
		},
		"segments' directory a file": func() {
			dir := filepath.Join(m.repo.StateDir(), recall.SegmentsDir)
			os.RemoveAll(dir)
			os.WriteFile(dir, []byte("not a directory"), 0o644)
		},
		"segments' directory a file, and a call to index": func() {
			dir := filepath.Join(m.repo.StateDir(), recall.SegmentsDir)
			os.RemoveAll(dir)
			os.WriteFile(dir, []byte("not a directory"), 0o644)
			m.record("s2", call("Bash", "t2", 1, map[string]any{"command": "make lint"}, "every file is formatted and vetted, nothing to fix"))
			m.update() // as a flush's, which reads no segment
		},
		"deleted": func() { os.Remove(path) },
		"a directory": func() {
			os.Remove(path)
			os.MkdirAll(filepath.Join(path, "not empty"), 0o755)
		},
		"segments' directory a loop of links": func() {
			dir := filepath.Join(m.repo.StateDir(), recall.SegmentsDir)
			os.RemoveAll(dir)
			os.Symlink(filepath.Base(dir), dir)
		},
		// Found only when a search reads them: rows the segments name are gone.
		"its rows gone":      func() { m.execIndex("DELETE FROM entries") },
		"truncated":          func() { os.Truncate(path, 100) },
		"garbage":            func() { os.WriteFile(path, []byte("not a database at all, not even close to one"), 0o644) },
		"of another version": func() { m.execIndex("PRAGMA user_version = 7") },
	} {
		os.Remove(path + "-wal")
		os.Remove(path + "-shm")
		damage()
		if res := m.search(recall.Query{Text: "recall"}); len(res.Hits) != 1 {
			t.Errorf("%s: %d hits, want 1", name, len(res.Hits))
		}
	}
}

// TestAnsweredCallIndexedAgain checks that a call reported before its result (Codex's
// PreToolUse), indexed while it waited, is indexed again once its result answers it:
// found by its result, not failed, pending and then in its commit.
func TestAnsweredCallIndexedAgain(t *testing.T) {
	m := newMemRepo(t)
	m.hook("codex", `{"session_id":"x1","turn_id":"t1","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"make test"},"tool_use_id":"call_1"}`)
	m.record("other", call("Read", "r1", time.Second, map[string]any{"file_path": "/w/a.go"}, strings.Repeat("package a ", 8)))
	m.flush() // commits the other session's call; the report waits for its result
	if res := m.search(recall.Query{Text: "make"}); len(res.Hits) != 1 || !res.Hits[0].Failed {
		t.Fatalf("the waiting report: %+v, want one failed hit", res.Hits)
	}
	m.hook("codex", `{"session_id":"x1","turn_id":"t1","cwd":"/w","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"make test"},"tool_response":"ok zebrafish passed, all 12 tests of the shop ran green","tool_use_id":"call_1"}`)
	check := func(committed bool) {
		t.Helper()
		res := m.search(recall.Query{Text: "zebrafish"})
		if len(res.Hits) != 1 || res.Hits[0].Failed || (res.Hits[0].Commit != "") != committed {
			t.Fatalf("the answered call (committed: %v): %+v", committed, res.Hits)
		}
		if res := m.search(recall.Query{Text: "make", Failed: true}); len(res.Hits) != 0 {
			t.Errorf("the answered call still found failed: %+v", res.Hits)
		}
	}
	check(false)
	m.hook("codex", `{"session_id":"x1","turn_id":"t1","cwd":"/w","hook_event_name":"Stop","last_assistant_message":"done"}`)
	m.flush()
	check(true)
}

// TestCommitAndJournalInOneUpdate has one update find what a flush committed both in
// its commit and in the journal, beside a call the flush left waiting for its result
// and answered since: each entry is indexed once, where git holds it, the call as
// answered.
func TestCommitAndJournalInOneUpdate(t *testing.T) {
	m := newMemRepo(t)
	m.hook("codex", `{"session_id":"x1","turn_id":"t1","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"make test"},"tool_use_id":"call_1"}`)
	for i := range 3 {
		m.record("other", call("Bash", fmt.Sprint("r", i), time.Duration(i)*time.Second, map[string]any{"command": fmt.Sprint("grep -n quokka zoo", i, ".txt")},
			fmt.Sprint("zoo", i, ".txt:1: the quokka smiles at the keeper, who feeds it leaves at noon")))
	}
	m.flush() // commits the calls; the index is not updated
	m.hook("codex", `{"session_id":"x1","turn_id":"t1","cwd":"/w","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"make test"},"tool_response":"ok zebrafish passed","tool_use_id":"call_1"}`)
	res := m.search(recall.Query{Text: "quokka"})
	if res.Total != 3 || len(res.Hits) != 3 {
		t.Fatalf("the committed calls: %d hits of %d, want 3", len(res.Hits), res.Total)
	}
	for _, h := range res.Hits {
		if h.Commit == "" || h.Path == "" {
			t.Errorf("a committed call not cited in its commit: %+v", h)
		}
	}
	if res := m.search(recall.Query{Text: "zebrafish"}); len(res.Hits) != 1 || res.Hits[0].Failed {
		t.Fatalf("the answered call: %+v, want one hit, not failed", res.Hits)
	}
	if res := m.search(recall.Query{Text: "make", Failed: true}); len(res.Hits) != 0 {
		t.Errorf("the answered call still found failed: %+v", res.Hits)
	}
}

// TestUpdateReadsSegmentsAnew: a reader that stays open (agmem mcp serve), then
// updates the index, finds what other processes indexed since it read the segments: a
// call reported after it opened, and answered since, is indexed once, as answered.
func TestUpdateReadsSegmentsAnew(t *testing.T) {
	m := newMemRepo(t)
	m.record("first", call("Bash", "r0", 0, map[string]any{"command": "make walrus"}, "the walrus was made before the reader opened, and it was a fine walrus"))
	m.flush()
	early := m.open()
	if res, err := early.Search(recall.Query{Text: "walrus"}); err != nil || len(res.Hits) != 1 {
		t.Fatalf("the call before the reader opened: %+v, %v", res.Hits, err)
	}
	m.hook("codex", `{"session_id":"x1","turn_id":"t1","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"make test"},"tool_use_id":"call_1"}`)
	m.record("other", call("Read", "r1", time.Second, map[string]any{"file_path": "/w/b.go"}, "package b"))
	m.flush()
	m.update() // indexes the waiting report, in a segment the reader has not read
	m.hook("codex", `{"session_id":"x1","turn_id":"t1","cwd":"/w","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"make test"},"tool_response":"ok zebrafish passed","tool_use_id":"call_1"}`)
	if err := early.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, err := early.Search(recall.Query{Text: "make", Session: "x1"})
	if err != nil || len(res.Hits) != 1 || res.Hits[0].Failed {
		t.Fatalf("the answered call: %+v, %v; want one hit, not failed", res.Hits, err)
	}
}

// TestSegmentsMerged records and flushes again and again, an update and its segment
// each time: eight segments of a size are merged into one, so that few stay, and every
// observation is found once, by a reader opened before the merges too.
func TestSegmentsMerged(t *testing.T) {
	m := newMemRepo(t)
	early := m.open()
	for i := range 20 {
		m.record(fmt.Sprint("s", i), call("Bash", fmt.Sprint("t", i), time.Duration(i)*time.Second,
			map[string]any{"command": fmt.Sprintf("make round%d", i)}, fmt.Sprintf("round %d of the merge test passed, and the tortoise won", i)))
		m.flush()
		if res := m.search(recall.Query{Text: "tortoise", Limit: 100}); len(res.Hits) != i+1 {
			t.Fatalf("after flush %d: %d hits, want %d", i, len(res.Hits), i+1)
		}
	}
	files, err := filepath.Glob(filepath.Join(m.repo.StateDir(), recall.SegmentsDir, "*"))
	if err != nil || len(files) >= 8 || len(files) == 0 {
		t.Fatalf("%d segment files after 20 updates: %v, %v", len(files), files, err)
	}
	if err := early.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, err := early.Search(recall.Query{Text: "tortoise", Limit: 100})
	if err != nil || len(res.Hits) != 20 {
		t.Fatalf("the reader opened first: %d hits, %v", len(res.Hits), err)
	}
	seen := map[string]bool{}
	for _, h := range res.Hits {
		if seen[h.ID] || h.Commit == "" {
			t.Errorf("%s: found twice, or not committed: %+v", h.ID, h)
		}
		seen[h.ID] = true
	}
}

// An update killed after it wrote its segment and before it committed leaves a file no
// transaction names: the next update that writes one removes it.
func TestSegmentFilesNoneNamesAreRemoved(t *testing.T) {
	m := newMemRepo(t)
	m.record("s1", call("Bash", "t1", 0, map[string]any{"command": "make"}, "the first update writes a segment of its own, its first and only one"))
	m.flush()
	m.search(recall.Query{Text: "update"})
	left := filepath.Join(m.repo.StateDir(), recall.SegmentsDir, "000099.seg")
	if err := os.WriteFile(left, []byte("a segment of an update that never committed"), 0o644); err != nil {
		t.Fatal(err)
	}
	m.record("s1", call("Bash", "t2", time.Second, map[string]any{"command": "make check"}, "the second update writes one, and sweeps away what no update names"))
	m.flush()
	if res := m.search(recall.Query{Text: "update"}); len(res.Hits) != 2 {
		t.Errorf("%d hits, want 2", len(res.Hits))
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("the file no transaction names is still there: %v", err)
	}
}

// TestUpdatesTakeTurns has readers make and update the index at once while calls are
// recorded, as an agent's context hook and its MCP server do when its session starts:
// none fails, and every call is found once.
func TestUpdatesTakeTurns(t *testing.T) {
	m := newMemRepo(t)
	m.record("s0", call("Bash", "t0", 0, map[string]any{"command": "make"}, "committed before the race, in which the readers make the index at once"))
	m.flush()
	const readers, rounds = 4, 10
	errs := make(chan error, readers)
	for r := range readers {
		go func() {
			for i := range rounds {
				m.record(fmt.Sprint("s", r), call("Bash", fmt.Sprint("t", r, "-", i), time.Duration(i)*time.Second,
					map[string]any{"command": fmt.Sprint("make race", r)}, "a racing update's call, recorded while other readers update the index"))
				mem, err := recall.Open(context.Background(), m.repo)
				if err != nil {
					errs <- err
					return
				}
				mem.Close()
			}
			errs <- nil
		}()
	}
	for range readers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if res := m.search(recall.Query{Text: "racing", Limit: 100}); len(res.Hits) != readers*rounds {
		t.Errorf("%d hits, want %d", len(res.Hits), readers*rounds)
	}
}

// parts are n calls "make partI", step apart, each of result "part I"+of.
func parts(n int, step time.Duration, of string) []record.Input {
	var calls []record.Input
	for i := range n {
		calls = append(calls, call("Bash", fmt.Sprint("c", i), time.Duration(i)*step,
			map[string]any{"command": fmt.Sprint("make part", i)}, fmt.Sprint("part ", i, of)))
	}
	return calls
}

// stopAfter is a context that ends once its Err was asked n times: an update stopped
// at a point of its own, the same each run.
type stopAfter struct {
	context.Context
	n atomic.Int64
}

func (c *stopAfter) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// TestUpdateStoppedMidway: an update stopped in its pass of git, which reads a record
// in parts on a goroutine of its own, or in its pass of the journal, leaves the index as
// it was and no reading behind, and the next update indexes every entry once.
func TestUpdateStoppedMidway(t *testing.T) {
	for _, flushed := range []bool{true, false} {
		t.Run(fmt.Sprint("flushed=", flushed), func(t *testing.T) {
			m := newMemRepo(t)
			m.record("s0", call("Bash", "t0", 0, map[string]any{"command": "make"}, "indexed first, before the update that stops midway"))
			m.flush()
			mem := m.open()
			m.record("s1", parts(3000, time.Millisecond, " of the heron's nest, built while the update stopped")...)
			if flushed {
				m.flush() // the update stops in its pass of git
			}
			goroutines := runtime.NumGoroutine()
			ctx := &stopAfter{Context: context.Background()}
			ctx.n.Store(100)
			if _, err := mem.Index.Update(ctx, m.git(), m.repo.Journal()); !errors.Is(err, context.Canceled) {
				t.Fatalf("an update past its context: %v", err)
			}
			if ctx.n.Load() > 0 {
				t.Fatalf("the update asked its context %d times: it did not stop midway", 100-ctx.n.Load())
			}
			for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > goroutines && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			if n := runtime.NumGoroutine(); n > goroutines {
				t.Errorf("%d goroutines after the update, %d before", n, goroutines)
			}
			if res, err := mem.Search(recall.Query{Text: "heron"}); err != nil || res.Total != 0 {
				t.Fatalf("the stopped update left %d hits, %v", res.Total, err)
			}
			if err := mem.Refresh(context.Background()); err != nil {
				t.Fatal(err)
			}
			res, err := mem.Search(recall.Query{Text: "heron", Limit: recall.MaxLimit})
			if err != nil || res.Total != 3000 {
				t.Fatalf("%d hits, %v; want 3000", res.Total, err)
			}
		})
	}
}

// TestShowByIDs: an entry is shown by its whole id and its short id after the segments
// that named it were merged, an event (no document of a segment) too; a reader opened
// before shows what another process indexed since, without updating; and the 300th
// call of one flushed record (read in parts) is whole.
// TestShowThePromptACallCameOf: a call recorded after the next prompt (Claude Code runs
// the hooks of calls in the background) is shown with the prompt its prompt_id names.
func TestShowThePromptACallCameOf(t *testing.T) {
	m := newMemRepo(t)
	m.hook("claude", `{"session_id":"a1","cwd":"/w","prompt_id":"pa","hook_event_name":"UserPromptSubmit","prompt":"run the slow build"}`)
	m.hook("claude", `{"session_id":"a1","cwd":"/w","prompt_id":"pb","hook_event_name":"UserPromptSubmit","prompt":"now something else"}`)
	m.hook("claude", `{"session_id":"a1","cwd":"/w","prompt_id":"pa","hook_event_name":"PostToolUse","tool_name":"Bash",`+
		`"tool_input":{"command":"make slow-build"},"tool_response":{"stdout":"the slow build finished after a long while","stderr":""},"tool_use_id":"tu1"}`)
	m.hook("claude", `{"session_id":"a1","cwd":"/w","prompt_id":"pb","hook_event_name":"PostToolUse","tool_name":"Bash",`+
		`"tool_input":{"command":"make other"},"tool_response":{"stdout":"the other thing was made, as it was asked","stderr":""},"tool_use_id":"tu2"}`)
	for _, flushed := range []bool{false, true} {
		if flushed {
			m.flush()
		}
		for command, want := range map[string]string{"slow": "run the slow build", "other": "now something else"} {
			hits := m.search(recall.Query{Text: command, Tool: "Bash"}).Hits
			if len(hits) != 1 {
				t.Fatalf("%s: %d hits", command, len(hits))
			}
			shown, err := m.open().Show([]string{hits[0].ID})
			if err != nil || len(shown) != 1 || shown[0].Prompt != want {
				t.Errorf("flushed %v: make %s shown with %+v, %v; want the prompt %q", flushed, command, shown, err, want)
			}
		}
	}
}

// TestCitedIDsShowTakes: two UUIDv7s of one millisecond share their short id (their
// time): search, timeline and context cite each by its whole id, which show takes;
// a ULID is cited by its short id.
func TestCitedIDsShowTakes(t *testing.T) {
	m := newMemRepo(t)
	failing := call("Bash", "u1", time.Second, map[string]any{"command": "make alpha"}, "")
	failing.ID, failing.Error = "0193a1b2-c3d5-7111-8a9b-0c1d2e3f4a5b", "make alpha failed: the kestrel target is missing"
	edit := call("Edit", "u2", 2*time.Second, map[string]any{"file_path": "/home/ana/shop/alpha.go"}, "edited alpha.go, where the kestrel target is made now")
	edit.ID = "0193a1b2-c3d5-7222-9a9b-0c1d2e3f4a5c"
	m.record("uuids", failing, edit, call("Read", "u3", 3*time.Second, map[string]any{"file_path": "/home/ana/shop/beta.go"}, "package beta, read whole for the kestrel target's test"))
	m.flush()
	mem := m.open()
	hits := m.search(recall.Query{Text: "kestrel", Limit: 10}).Hits
	if len(hits) != 3 {
		t.Fatalf("%d hits", len(hits))
	}
	for _, h := range hits {
		want := h.ID
		if h.Tool == "Read" {
			want = strings.ToLower(memory.ShortID(h.ID))
		}
		if h.Short != want {
			t.Errorf("%s is cited as %s, want %s", h.ID, h.Short, want)
		}
		if shown, err := mem.Show([]string{h.Short}); err != nil || shown[0].ID != h.ID {
			t.Errorf("show %s: %v", h.Short, err)
		}
	}
	_, around, err := mem.Timeline(hits[0].Short, 5, 5)
	if err != nil || len(around) != 3 || around[0].Short != failing.ID || around[1].Short != edit.ID {
		t.Errorf("timeline: %+v, %v", around, err)
	}
	block, err := mem.Context("/home/ana/shop", 6000)
	if err != nil || !strings.Contains(block.Text, "failed: "+failing.ID+" make alpha") || !slices.Contains(block.Cited, failing.ID) {
		t.Errorf("context: %v\n%s\ncites %v", err, block.Text, block.Cited)
	}
}

func TestShowByIDs(t *testing.T) {
	m := newMemRepo(t)
	early := m.open()
	m.record("s0", parts(300, time.Second, " of the otter's dam, one of three hundred parts the otter built")...)
	m.flush()
	m.update()
	for i := range 9 { // segments of a size merged
		m.record(fmt.Sprint("s", i+1), call("Bash", "t", time.Hour, map[string]any{"command": "make"}, fmt.Sprint("round ", i, " of the merges, and the otter swims on")))
		m.flush()
		m.update()
	}
	res := m.search(recall.Query{Text: "otter dam", Limit: recall.MaxLimit})
	if len(res.Hits) != 300 {
		t.Fatalf("%d hits of the 300 calls", len(res.Hits))
	}
	var last recall.Ref
	for _, h := range res.Hits {
		if h.Summary == "Bash command=make part299" {
			last = h.Ref
		}
	}
	for _, id := range []string{last.ID, last.Short, strings.ToUpper(last.Short)} {
		got, err := early.Resolve(id) // early never updated: another process indexed it
		if err != nil || got.ID != last.ID {
			t.Errorf("Resolve(%s) = %s, %v; want %s", id, got.ID, err, last.ID)
		}
	}
	obs, err := early.Show([]string{last.Short})
	if err != nil || len(obs) != 1 || obs[0].Entry.Observation == nil || !strings.Contains(string(obs[0].Entry.Observation.Result), "part 299 of the otter") {
		t.Fatalf("Show(%s): %+v, %v", last.Short, obs, err)
	}
	// named again, by its short id and its whole one, among ids of none: given once
	each, err := early.ShowEach([]string{last.Short, "zzzzzzzzzzzz", last.ID, strings.ToUpper(last.Short), "zzzzzzzzzzzz"})
	if err != nil || len(each) != 3 || each[0].Err != nil || each[0].Entry.ID() != last.ID || each[1].Err == nil || each[2].Err == nil {
		t.Fatalf("ShowEach of one entry three times, among two ids of none: %+v, %v", each, err)
	}
	m.hook("codex", `{"session_id":"x9","turn_id":"t1","cwd":"/w","hook_event_name":"UserPromptSubmit","prompt":"ask the otter about the beaver's lodge"}`)
	m.hook("codex", `{"session_id":"x9","turn_id":"t1","cwd":"/w","hook_event_name":"Stop","last_assistant_message":"done"}`)
	m.flush()
	m.update()
	prompts := m.search(recall.Query{Text: "beaver lodge"})
	if len(prompts.Hits) != 1 || prompts.Hits[0].Event == "" {
		t.Fatalf("the prompt: %+v", prompts.Hits)
	}
	_, around, err := early.Timeline(prompts.Hits[0].Short, 0, 5)
	if err != nil {
		t.Fatal(err)
	}
	events := 0
	for _, r := range append(around, prompts.Hits[0].Ref) {
		if r.Event != "" {
			events++
			if got, err := early.Resolve(r.Short); err != nil || got.ID != r.ID {
				t.Errorf("the event %s (%s): %s, %v", r.Short, r.Event, got.ID, err)
			}
		}
	}
	if events < 2 {
		t.Errorf("%d events around the prompt, want its session's Stop too", events)
	}
}

// TestOpenWithinItsTime opens the memory with a deadline while another update holds the
// index: it answers from the index as it is once the deadline passes, without waiting for
// the other update (as agmem context does before an agent's session starts).
func TestOpenWithinItsTime(t *testing.T) {
	m := newMemRepo(t)
	m.record("s1", call("Bash", "t1", 0, map[string]any{"command": "make"}, "indexed before another update takes the index's write lock"))
	m.flush()
	m.search(recall.Query{Text: "indexed"})
	recalltest.HoldWriteLock(t, m.repo.StateDir())
	m.record("s1", call("Bash", "t2", time.Second, map[string]any{"command": "make check"}, "recorded while the other update holds the index, found by the next"))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	mem, err := recall.Open(ctx, m.repo)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	// Not a measure of speed: the bound is the index's busy timeout, which it must not wait.
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Open waited %v for the other update", took)
	}
	if res, err := mem.Search(recall.Query{Text: "indexed"}); err != nil || len(res.Hits) != 1 {
		t.Errorf("the index as it was: %d hits, %v", len(res.Hits), err)
	}
	if note, wait := mem.Lag(); !strings.Contains(note, "still catching up") || !wait {
		t.Errorf("the memory says %q, %v; want that its index is catching up", note, wait)
	}
}

// behind says whether mem's index is behind (recall.Memory.Lag).
func behind(mem *recall.Memory) bool {
	note, _ := mem.Lag()
	return note != ""
}

// TestCatchUpWhenLeftBehind: a reader that lives on is given what starts an update of
// its own; a Refresh that leaves the index behind calls it, at most once a minute, and
// one that brings the index up to date does not.
func TestCatchUpWhenLeftBehind(t *testing.T) {
	m := newMemRepo(t)
	m.record("s1", call("Bash", "t1", 0, map[string]any{"command": "make"}, "indexed before another update takes the index's write lock"))
	mem, err := recall.Open(context.Background(), m.repo)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	started := 0
	mem.SetCatchUp(func() { started++ })
	if started != 0 {
		t.Fatalf("an index up to date started %d updates", started)
	}
	release := recalltest.HoldWriteLock(t, m.repo.StateDir())
	m.record("s1", call("Bash", "t2", time.Second, map[string]any{"command": "make check"}, "recorded while another update holds the index, and found by the update after it"))
	for range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		mem.Refresh(ctx)
		cancel()
	}
	if !behind(mem) || started != 1 {
		t.Errorf("left behind twice: behind %v, %d updates started, want 1", behind(mem), started)
	}
	release()
	if err := mem.Refresh(context.Background()); err != nil || behind(mem) || started != 1 {
		t.Errorf("brought up to date: %v, behind %v, %d updates started", err, behind(mem), started)
	}
}

// TestFailedUpdateStartsNoCatchUp: a Refresh whose update fails (here the segments'
// directory is a file) returns why, and the memory keeps it (Failed): an update of its
// own would fail the same, so none is started, and a reader says the update failed
// rather than that the index is catching up. Once the update can be done, it is.
func TestFailedUpdateStartsNoCatchUp(t *testing.T) {
	m := newMemRepo(t)
	m.record("s1", call("Bash", "t1", 0, map[string]any{"command": "make"}, "indexed before the segments' directory is taken away"))
	mem := m.open()
	started := 0
	mem.SetCatchUp(func() { started++ })
	mend := recalltest.BreakSegments(t, m.repo.StateDir())
	m.record("s1", call("Bash", "t2", time.Second, map[string]any{"command": "make check"}, "recorded while the index cannot be written, found once it can"))
	err := mem.Refresh(context.Background())
	if note, wait := mem.Lag(); err == nil || !strings.Contains(note, "could not be brought up to date") ||
		!strings.Contains(note, "not a directory") || wait || started != 0 {
		t.Fatalf("a failed update: %v, the memory says %q (wait %v), %d updates started; want its error said and none started",
			err, note, wait, started)
	}
	mend()
	if err := mem.Refresh(context.Background()); err != nil || behind(mem) || started != 0 {
		t.Fatalf("after: %v, behind %v, %d updates started", err, behind(mem), started)
	}
	if res, err := mem.Search(recall.Query{Text: "recorded"}); err != nil || len(res.Hits) != 1 {
		t.Errorf("the call recorded meanwhile: %+v, %v", res.Hits, err)
	}
}

// TestEmptyWhileMadeAnew: a reader that opens the index while another process makes it
// anew, holding it past the reader's time, finds it behind and empty, and says so.
func TestEmptyWhileMadeAnew(t *testing.T) {
	m := newMemRepo(t)
	m.record("s1", call("Bash", "t1", 0, map[string]any{"command": "make"}, "recorded before the index is made anew, and found after"))
	m.update()
	if err := recall.RemoveIndex(m.repo.StateDir()); err != nil {
		t.Fatal(err)
	}
	ix, err := recall.OpenIndex(m.repo.StateDir()) // its tables, as a rebuild makes them first
	if err != nil {
		t.Fatal(err)
	}
	ix.Close()
	release := recalltest.HoldWriteLock(t, m.repo.StateDir())
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	mem, err := recall.Open(ctx, m.repo)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if note, wait := mem.Lag(); !strings.Contains(note, "holds nothing yet") || !wait {
		t.Errorf("while made anew, the memory says %q, %v", note, wait)
	}
	release()
	if err := mem.Refresh(context.Background()); err != nil || behind(mem) {
		t.Errorf("once made: %v, behind %v", err, behind(mem))
	}
}

// TestNothingNewWaitsForNoWriter: a reader that finds nothing new since the last update
// does not wait for the write lock another update holds (the MCP server brings the index
// up to date before each call; agmem search and context before they read).
func TestNothingNewWaitsForNoWriter(t *testing.T) {
	m := newMemRepo(t)
	m.record("s1", call("Bash", "t1", 0, map[string]any{"command": "make"}, "indexed before another update takes the index's write lock"))
	m.flush()
	m.record("s1", call("Bash", "t2", time.Second, map[string]any{"command": "make check"}, "pending in the journal, and indexed before the other update takes the lock"))
	m.search(recall.Query{Text: "indexed"})
	recalltest.HoldWriteLock(t, m.repo.StateDir())
	start := time.Now()
	mem, err := recall.Open(context.Background(), m.repo)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	// Not a measure of speed: the bound is the index's busy timeout, 10 s, which an
	// update that took the lock would wait.
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Open waited %v for the other update, with nothing new to index", took)
	}
	if res, err := mem.Search(recall.Query{Text: "indexed"}); err != nil || len(res.Hits) != 2 {
		t.Errorf("%d hits, %v", len(res.Hits), err)
	}
	if behind(mem) {
		t.Error("an index up to date says it is behind")
	}
}

// TestJournalMadeAnew moves the journal aside, as agmem's hint for a damaged one says:
// what it held pending is forgotten by the index, and what the new journal records is
// found, though the index gave the forgotten entries the rows it would give new ones.
func TestJournalMadeAnew(t *testing.T) {
	m := newMemRepo(t)
	for i := range 3 {
		m.record("s1", call("Bash", fmt.Sprint("old", i), time.Duration(i)*time.Second, map[string]any{"command": fmt.Sprint("make old", i)},
			"pending in the journal that is moved aside, never committed: the heron"))
	}
	if res := m.search(recall.Query{Text: "heron"}); len(res.Hits) != 3 {
		t.Fatalf("%d hits for the pending calls, want 3", len(res.Hits))
	}
	journal := filepath.Join(m.repo.StateDir(), "journal.db")
	if err := os.Rename(journal, journal+".aside"); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		m.record("s2", call("Bash", fmt.Sprint("new", i), time.Duration(10+i)*time.Second, map[string]any{"command": fmt.Sprint("make new", i)},
			"recorded in the journal made anew: the kingfisher, found by its words"))
	}
	if res := m.search(recall.Query{Text: "kingfisher"}); len(res.Hits) != 3 {
		t.Errorf("%d hits for the new journal's calls, want 3", len(res.Hits))
	}
	if res := m.search(recall.Query{Text: "heron"}); len(res.Hits) != 0 {
		t.Errorf("%d hits for the forgotten calls, want 0", len(res.Hits))
	}
}

// TestCommittedAsTheJournalHoldsIt: what an update makes of each line of a flush's
// record (committedJSON) is the JSON the journal gives of that entry, byte for byte,
// with HTML's characters and line separators in its strings too: the update after a
// flush passes over the flush's entries in the journal without decoding them again.
func TestCommittedAsTheJournalHoldsIt(t *testing.T) {
	m := newMemRepo(t)
	out := m.record("s1",
		record.Event{Name: "UserPromptSubmit", Text: "fix <b> & the\u2028<script> tag", Time: t0},
		call("Bash", "t1", time.Second, map[string]any{"command": "go vet && echo '<ok>'\u2029"}, "ok <all> & done, the vet found nothing in the <b> package & its tests"),
		call("Read", "t2", 2*time.Second, map[string]any{"file_path": "src/a.go"}, "package a // a file of plain words, with nothing to escape"),
	)
	if len(out.Recorded) != 3 {
		t.Fatalf("recorded %+v", out)
	}
	m.flush()
	held := map[string]bool{}
	_, err := m.repo.Journal().SinceUnknown(0, func(raw []byte) bool {
		held[string(raw)] = true
		return true
	}, func(e memory.Entry) error { return fmt.Errorf("%s decoded", e.ID()) })
	if err != nil {
		t.Fatal(err)
	}
	git := m.git()
	_, tip, err := git.Head()
	if err != nil {
		t.Fatal(err)
	}
	files, err := git.AddedPaths(tip, func(path string) bool { return strings.HasSuffix(path, ".jsonl") })
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, f := range files {
		for line := range bytes.Lines(f.Data) {
			if line = bytes.TrimSpace(line); !held[string(recall.CommittedJSON(line))] {
				t.Errorf("the journal holds no entry as\n%s", recall.CommittedJSON(line))
			}
			lines++
		}
	}
	if lines < 3 {
		t.Fatalf("%d lines in the flush's record, %d entries in the journal", lines, len(held))
	}
}

// TestLongIDSaidInPart: an id far longer than any is said in part in its error.
func TestLongIDSaidInPart(t *testing.T) {
	mem := newMemRepo(t).open()
	for _, id := range []string{strings.Repeat("z", 5000), strings.Repeat("é", 3000)} {
		if _, err := mem.Resolve(id); !errors.Is(err, recall.ErrNotFound) || len(err.Error()) > 120 || !strings.Contains(err.Error(), "…") {
			t.Errorf("an id of %d bytes: %v", len(id), err)
		}
	}
}

// TestUnmatched: a search that finds nothing is told which filters name nothing the
// memory holds, in an empty memory as in one that holds other agents' work.
func TestUnmatched(t *testing.T) {
	m := newMemRepo(t)
	mem, err := recall.Open(context.Background(), m.repo)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	q := recall.Query{Text: "make", Agent: "codex", Tool: "bash", Session: "s9", Project: "/home/bo"}
	unmatched := func(q recall.Query) (string, error) {
		res, err := mem.Search(q)
		if len(res.Hits) > 0 {
			t.Errorf("%+v found %+v", q, res.Hits)
		}
		return res.Unmatched, err
	}
	if got, err := unmatched(q); err != nil || got != `no agent "codex": the memory holds no agent's work yet; no tool "bash"; no session "s9" (give its whole id); no session worked in /home/bo or under it` {
		t.Errorf("empty: %q %v", got, err)
	}
	m.record("s1", call("Bash", "t1", 0, map[string]any{"command": "make"}, "the build of the whole project passed, with every test of it"))
	if err := mem.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, err := unmatched(q); err != nil || got != `no agent "codex": the agents are claude-code; no tool "bash", but Bash (a tool is named as its agent names it); no session "s9" (give its whole id); no session worked in /home/bo or under it` {
		t.Errorf("one session: %q %v", got, err)
	}
	if got, err := unmatched(recall.Query{Text: "nothing", Agent: "claude-code", Tool: "Bash", Session: "s1", Project: "/home/ana"}); err != nil || got != "" {
		t.Errorf("filters that each name something: %q %v", got, err)
	}
	if got, err := unmatched(recall.Query{Text: "nothing", Agent: "claude"}); err != nil || got != "" { // as its hooks name it
		t.Errorf("an agent by its hooks' name: %q %v", got, err)
	}
}

// TestRewrittenBranch: a branch reset past a commit the index read makes the index
// anew, so that nothing is cited in a commit no branch holds; a reader with a deadline
// leaves that to an update with none (agmem index, in the background), and reads the
// index as it is meanwhile, saying it lags.
func TestRewrittenBranch(t *testing.T) {
	m := newMemRepo(t)
	m.record("s1", call("Read", "r1", 0, map[string]any{"file_path": "/home/ana/shop/kept.go"}, strings.Repeat("the okapi file, kept ", 5)))
	m.flush()
	m.record("s2", call("Read", "r2", time.Second, map[string]any{"file_path": "/home/ana/shop/dropped.go"}, strings.Repeat("the walrus file, dropped ", 5)))
	m.flush()
	m.update()
	if n := len(m.search(recall.Query{Text: "walrus", Limit: 10}).Hits); n != 1 {
		t.Fatalf("walrus: %d hits before the reset", n)
	}
	reset := exec.Command("git", "reset", "-q", "--hard", "HEAD~1")
	reset.Dir = m.repo.Root
	if out, err := reset.CombinedOutput(); err != nil {
		t.Fatalf("git reset: %v: %s", err, out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bounded, err := recall.Open(ctx, m.repo)
	if err != nil {
		t.Fatal(err)
	}
	if note, _ := bounded.Lag(); note == "" {
		t.Error("a reader with a deadline says nothing of the index it leaves to be made anew")
	}
	bounded.Close()

	// The journal still holds the dropped call: it is found as no commit holds it.
	_, tip, err := m.git().Head()
	if err != nil {
		t.Fatal(err)
	}
	for word, commit := range map[string]string{"walrus": "", "okapi": tip.String()} {
		res := m.search(recall.Query{Text: word, Limit: 10})
		if len(res.Hits) != 1 || res.Hits[0].Commit != commit {
			t.Errorf("%s after the reset: %+v, want one hit in commit %q", word, res.Hits, commit)
		}
	}
}

// Words are found whatever the script they are in, and however their accents were
// typed: a prompt in Japanese is found by a word of it, as a user types one; a file
// name as macOS writes it (an accent a mark after its letter) by the name typed.
func TestSearchWhateverTheScript(t *testing.T) {
	m := newMemRepo(t)
	m.record("s1",
		record.Event{Name: "UserPromptSubmit", Text: "決済のテストが失敗する原因を調べて、日本語のエラーメッセージを直してください", Time: t0},
		call("Read", "t1", time.Second, map[string]any{"file_path": "/Users/ana/Documents/U\u0308berpru\u0308fung.md"},
			"the report of the Überprüfung, read in full by the agent before it answered"),
	)
	m.flush()
	for _, c := range []struct{ query, mark string }{
		{"エラーメッセージ", "**エラーメッセージ**"},
		{"テスト 失敗", "**テスト**"},
		{"原因", "**原因**"},
		{"決", "**決済**"},
		{"Überprüfung.md", "Überprüfung"},
		{"UBERPRUFUNG", "Überprüfung"},
	} {
		res := m.search(recall.Query{Text: c.query})
		if len(res.Hits) != 1 || !strings.Contains(res.Hits[0].Snippet, c.mark) {
			t.Errorf("search %q: %d hits %+v, want one marked %q", c.query, len(res.Hits), res.Hits, c.mark)
		}
	}
	if res := m.search(recall.Query{Text: "メッセージを直す"}); len(res.Hits) != 0 {
		t.Errorf("a phrase the prompt does not hold: %+v", res.Hits)
	}
}

// TestRebuildWhileRead: agmem index --rebuild, as the hint for a damaged index says to
// run, makes the index anew while other processes read it: none of their searches
// fails or finds less (it removed the files from under them).
func TestRebuildWhileRead(t *testing.T) {
	m := newMemRepo(t)
	m.record("s", parts(300, time.Second, " of the rebuild, a result long enough to be kept as a call")...)
	m.flush()
	m.update()
	done, git := make(chan error), m.git()
	go func() {
		for range 6 {
			if _, err := recall.RebuildIndex(m.repo.StateDir(), git, m.repo.Journal()); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for searches := 0; ; searches++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			if searches == 0 {
				t.Fatal("no search ran while the index was made anew: the test proved nothing")
			}
			// and the segments of the index before are gone with it
			files, _ := filepath.Glob(filepath.Join(m.repo.StateDir(), recall.SegmentsDir, "*"))
			var named int
			if err := m.indexDB().QueryRow(`SELECT count(*) FROM segments`).Scan(&named); err != nil || named != len(files) {
				t.Errorf("%d segment files, %d named: %v", len(files), named, err)
			}
			return
		default:
		}
		mem, err := recall.Open(context.Background(), m.repo)
		if err != nil {
			t.Fatalf("open while the index is made anew: %v", err)
		}
		res, err := mem.Search(recall.Query{Text: "rebuild", Limit: 1000})
		mem.Close()
		if err != nil || len(res.Hits) != 300 {
			t.Fatalf("search %d while the index is made anew: %d hits, %v", searches, len(res.Hits), err)
		}
	}
}

// TestReaderOfAMemoryMadeAnew: a reader that stays open (agmem mcp serve, agmem ui)
// while its memory repo is deleted and made again at its path, or its index file is
// removed and made anew by another process, reads the memory as it is now: what it held
// open was of files no longer there, which nothing else updates.
func TestReaderOfAMemoryMadeAnew(t *testing.T) {
	for _, remove := range []string{"the repo", "the index"} {
		t.Run(remove, func(t *testing.T) {
			m := newMemRepo(t)
			m.record("s1", call("Bash", "r0", 0, map[string]any{"command": "make walrus"}, "the walrus was made before the memory was made anew, and it was a fine walrus"))
			m.flush()
			m.update()
			m.record("s1", call("Bash", "r2", time.Second, map[string]any{"command": "make walrus again"}, "the second walrus was pending when it all went, and it was a fine walrus"))
			early := m.open()
			// with a deadline, as a reader refreshes: a branch rewritten is left to agmem index
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if res, err := early.Search(recall.Query{Text: "walrus"}); err != nil || len(res.Hits) != 2 {
				t.Fatalf("before: %+v, %v", res.Hits, err)
			}
			gone := m.repo.Root
			if remove == "the index" {
				gone = m.repo.StateDir()
			}
			if err := os.RemoveAll(gone); err != nil {
				t.Fatal(err)
			}
			if _, _, err := maintain.Init(m.repo.Root); err != nil {
				t.Fatal(err)
			}
			m.record("s2", call("Read", "r1", time.Second, map[string]any{"file_path": "/w/z.go"}, "the zebrafish came after the memory was made anew, a result long enough to keep"))
			if err := early.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			if res, err := early.Search(recall.Query{Text: "zebrafish"}); err != nil || len(res.Hits) != 1 || res.Hits[0].Commit != "" {
				t.Fatalf("what came after, pending: %+v, %v", res.Hits, err)
			}
			m.flush()
			m.update()
			if err := early.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			res, err := early.Search(recall.Query{Text: "zebrafish"})
			if err != nil || len(res.Hits) != 1 || res.Hits[0].Commit == "" {
				t.Fatalf("what came after: %+v, %v", res.Hits, err)
			}
			if tip, err := m.git().Tip("refs/heads/main"); err != nil || !strings.HasPrefix(tip.String(), res.Hits[0].Commit) {
				t.Errorf("cited %s, the branch's tip is %s (%v)", res.Hits[0].Commit, tip, err)
			}
			want := 1 // the walrus's commit is on the branch still; the pending one went with the journal
			if remove == "the repo" {
				want = 0
			}
			if res, err := early.Search(recall.Query{Text: "walrus"}); err != nil || len(res.Hits) != want {
				t.Errorf("what came before: %+v, %v; want %d hit(s)", res.Hits, err, want)
			}
		})
	}
}

// TestIndexThatCannotBeWrittenIsReadAsItIs: an index that opens for no reason a new file
// mends (here its shared-memory file cannot be made: a directory is in its place; a
// read-only file system, a full disk, a repo of another user's in life) is not removed,
// which lost it where nothing could make it anew: it is read as it is, and each reader
// says it could not be brought up to date, and why.
func TestIndexThatCannotBeWrittenIsReadAsItIs(t *testing.T) {
	m := newMemRepo(t)
	m.record("s1", call("Bash", "r0", 0, map[string]any{"command": "make walrus"}, "the walrus was indexed before the index could not be written"))
	m.flush()
	m.update()
	path := filepath.Join(m.repo.StateDir(), recall.IndexFile)
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(path + "-shm")
	if err := os.Mkdir(path+"-shm", 0o755); err != nil {
		t.Fatal(err)
	}
	m.record("s1", call("Bash", "r1", time.Second, map[string]any{"command": "make zebrafish"}, "the zebrafish came when the index could not be written"))
	mem := m.open()
	if res, err := mem.Search(recall.Query{Text: "walrus"}); err != nil || len(res.Hits) != 1 {
		t.Fatalf("what the index held: %+v, %v", res.Hits, err)
	}
	if note, wait := mem.Lag(); !strings.Contains(note, "could not be brought up to date") || wait {
		t.Errorf("Lag() = %q, %v", note, wait)
	}
	if err := mem.Refresh(context.Background()); err == nil {
		t.Error("an update of an index that cannot be written succeeded")
	}
	if after, err := os.Stat(path); err != nil || !os.SameFile(before, after) {
		t.Errorf("the index file was removed or replaced: %v", err)
	}
}

// TestIndexThatFailsToOpenIsMadeAnew: an index that fails to open for what a new file
// mends, though not found damaged by SQLite's own codes (a table gone), is made anew, not
// read as it is as one that cannot be written.
func TestIndexThatFailsToOpenIsMadeAnew(t *testing.T) {
	m := newMemRepo(t)
	m.record("s1", call("Bash", "r0", 0, map[string]any{"command": "make walrus"}, "the walrus was indexed before the index lost a table of its own"))
	m.flush()
	m.update()
	m.execIndex(`DROP TABLE meta`)
	mem := m.open()
	if note, _ := mem.Lag(); note != "" {
		t.Errorf("Lag() = %q, want the index made anew", note)
	}
	if res, err := mem.Search(recall.Query{Text: "walrus"}); err != nil || len(res.Hits) != 1 {
		t.Fatalf("after the index was made anew: %+v, %v", res.Hits, err)
	}
}
