package recall

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/render"
	"github.com/agmem/agmem/vcs"
)

// commitBatches commits each batch's session record, as flushes do, one commit each.
func commitBatches(tb testing.TB, session string, batches ...[]memory.Entry) *vcs.Git {
	tb.Helper()
	repo, _, err := vcs.Init(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	branch, err := repo.Branch()
	if err != nil {
		tb.Fatal(err)
	}
	for i, batch := range batches {
		_, tip, err := repo.Head()
		if err != nil {
			tb.Fatal(err)
		}
		d, err := repo.NewDraft(tip)
		if err != nil {
			tb.Fatal(err)
		}
		for _, part := range render.SessionRecordParts(render.CurrentLayout.SessionRecordPath(session, fmt.Sprintf("batch%02d", i)), batch) {
			if err := d.Put(part.Path, part.Data); err != nil {
				tb.Fatal(err)
			}
		}
		if _, err := d.Commit(branch, fmt.Sprintf("batch %d\n", i), time.Unix(int64(i), 0)); err != nil {
			tb.Fatal(err)
		}
	}
	return repo
}

func observation(session string, n int, result string) memory.Entry {
	raw, _ := json.Marshal(result)
	return memory.Entry{Observation: &memory.Observation{
		ID:         fmt.Sprintf("obs%06d", n),
		SessionID:  session,
		Timestamp:  time.Date(2026, 11, 30, 9, 0, n, 0, time.UTC),
		ToolName:   "read_file",
		Arguments:  json.RawMessage(`{"path":"a.go"}`),
		Result:     raw,
		MemoryType: memory.Semantic,
		Summary:    "read_file path=a.go",
	}}
}

// sessionJSON is what SessionJSON passes on, one line each.
func sessionJSON(tb testing.TB, repo *vcs.Git, session string) []string {
	tb.Helper()
	var got []string
	n, err := SessionJSON(repo, session, func(raw []byte) error {
		got = append(got, string(raw))
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	if n != len(got) {
		tb.Fatalf("SessionJSON says %d entries, passed on %d", n, len(got))
	}
	return got
}

// SessionJSON passes on a session's entries as the journal stores them (json.Marshal's
// JSON, HTML escaped), each once, in time order: records flushed out of time order and
// lines longer than any buffer read included.
func TestSessionJSON(t *testing.T) {
	const s = "s1"
	long := strings.Repeat("func f() { if a < b && c > d { return } }\n", 80000) // 3.4 MB: one line
	late := []memory.Entry{
		observation(s, 2, "<b>two</b> & \u2028"),
		observation(s, 4, long),
		{Event: &memory.Event{ID: "ev000005", SessionID: s, Timestamp: time.Date(2026, 11, 30, 9, 0, 5, 0, time.UTC), Name: "SessionEnd"}},
	}
	early := []memory.Entry{
		observation(s, 1, "one"),
		observation(s, 2, "<b>two</b> & \u2028"), // flushed twice: once in the output
		observation(s, 3, "three"),
	}
	repo := commitBatches(t, s, late, early)

	var want []string
	for _, e := range []memory.Entry{early[0], late[0], early[2], late[1], late[2]} {
		raw, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, string(raw))
	}
	got := sessionJSON(t, repo, s)
	if !slices.Equal(got, want) {
		t.Errorf("got %d lines, want %d:\n%.300q\nwant\n%.300q", len(got), len(want), got, want)
	}
	if got := sessionJSON(t, repo, "nobody"); len(got) != 0 {
		t.Errorf("a session git does not hold: got %d lines", len(got))
	}
}

// A record's parts are read as one: a line may run on from one into the next, as a
// line longer than render.MaxRecordPart does.
func TestSessionJSONLineAcrossParts(t *testing.T) {
	e := observation("s1", 1, "one")
	raw, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	repo := commitBatches(t, "s1")
	_, tip, _ := repo.Head()
	d, err := repo.NewDraft(tip)
	if err != nil {
		t.Fatal(err)
	}
	first := render.CurrentLayout.SessionRecordPath("s1", "batch00")
	second := strings.TrimSuffix(first, ".jsonl") + "-2.jsonl"
	if err := d.Put(first, raw[:40]); err != nil {
		t.Fatal(err)
	}
	if err := d.Put(second, append(raw[40:], '\n')); err != nil {
		t.Fatal(err)
	}
	branch, _ := repo.Branch()
	if _, err := d.Commit(branch, "parts\n", time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	if got := sessionJSON(t, repo, "s1"); len(got) != 1 || got[0] != string(raw) {
		t.Errorf("got %q, want %q", got, raw)
	}
}

// A fetched branch's record that is not all valid is passed over whole, its other parts
// unread; its other records, and this repo's, are read.
func TestSessionJSONFetchedBrokenRecord(t *testing.T) {
	const s = "s1"
	mine := observation(s, 1, "mine")
	repo := commitBatches(t, s, []memory.Entry{mine})
	good, lost := observation(s, 2, "theirs"), observation(s, 3, "lost")
	goodRaw, _ := json.Marshal(good)
	lostRaw, _ := json.Marshal(lost)
	d, err := repo.NewDraft(plumbing.ZeroHash)
	if err != nil {
		t.Fatal(err)
	}
	broken := render.CurrentLayout.SessionRecordPath(s, "batch01")
	files := map[string]string{
		render.CurrentLayout.SessionRecordPath(s, "batch00"): string(goodRaw) + "\n",
		broken: string(lostRaw) + "\n" + `{"observation":{"id":5}}` + "\n",
		strings.TrimSuffix(broken, ".jsonl") + "-2.jsonl": string(lostRaw) + "\n",
	}
	for path, data := range files {
		if err := d.Put(path, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.Commit("refs/remotes/origin/agents/other", "theirs\n", time.Unix(5, 0)); err != nil {
		t.Fatal(err)
	}
	mineRaw, _ := json.Marshal(mine)
	want := []string{string(mineRaw), string(goodRaw)}
	if got := sessionJSON(t, repo, s); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// A record of this repo's own that is not JSON fails the replay before any line is
// passed on.
func TestSessionJSONBrokenRecord(t *testing.T) {
	repo := commitBatches(t, "s1", []memory.Entry{observation("s1", 1, "one")})
	_, tip, err := repo.Head()
	if err != nil {
		t.Fatal(err)
	}
	d, err := repo.NewDraft(tip)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Put(render.CurrentLayout.SessionRecordPath("s1", "batch99"), []byte(`{"observation":{"id":"x"`+"\n")); err != nil {
		t.Fatal(err)
	}
	branch, _ := repo.Branch()
	if _, err := d.Commit(branch, "hand edit\n", time.Unix(9, 0)); err != nil {
		t.Fatal(err)
	}
	passed := 0
	_, err = SessionJSON(repo, "s1", func([]byte) error { passed++; return nil })
	if err == nil || passed > 0 {
		t.Errorf("SessionJSON = %v, %d lines passed on; want an error and none", err, passed)
	}
}

// benchBatch is 10,000 observations of about 1 KiB of session "bench", each made by
// entry from its number and text, as the ingest bench replays 100,000.
func benchBatch(entry func(session string, i int, text string) memory.Entry) (string, []memory.Entry) {
	const s = "bench"
	var batch []memory.Entry
	text := strings.Repeat("\tif err != nil {\n\t\treturn fmt.Errorf(\"read %s: %w\", name, err)\n\t}\n", 16)
	for i := 0; i < 10000; i++ {
		batch = append(batch, entry(s, i, text[:1000]))
	}
	return s, batch
}

// 10,000 observations of about 1 KiB in one batch (benchBatch).
func BenchmarkSessionJSON(b *testing.B) {
	s, batch := benchBatch(observation)
	repo := commitBatches(b, s, batch)
	var size int64
	for _, part := range render.SessionRecordParts(render.CurrentLayout.SessionRecordPath(s, "batch00"), batch) {
		size += int64(len(part.Data))
	}
	b.SetBytes(size)
	for b.Loop() {
		if _, err := SessionJSON(repo, s, func([]byte) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(batch))/b.Elapsed().Seconds(), "observations/s")
}
