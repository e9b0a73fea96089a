package recall

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/render"
	"github.com/agmem/agmem/vcs"
)

func event(session string, n int, source string) memory.Entry {
	return memory.Entry{Event: &memory.Event{ID: fmt.Sprintf("ev%06d", n), SessionID: session,
		Timestamp: time.Date(2026, 11, 30, 9, 0, n, 0, time.UTC), Name: "UserPromptSubmit", Source: source}}
}

func from(e memory.Entry, source string) memory.Entry {
	if e.Observation != nil {
		e.Observation.Source = source
	} else {
		e.Event.Source = source
	}
	return e
}

// summaryOf is what Summaries must say of a session Session reads as entries.
func summaryOf(entries []memory.Entry) Summary {
	s := Summary{Repo: Local, First: entries[0].Time(), Last: entries[len(entries)-1].Time()}
	for _, e := range entries {
		if e.Observation != nil {
			s.Observations++
		} else {
			s.Events++
		}
		if s.Source == "" && e.Source() != "" {
			s.Source, s.sourceAt = e.Source(), e.Time()
		}
	}
	return s
}

// commitFiles commits files on ref, on top of what it holds.
func commitFiles(tb testing.TB, repo *vcs.Git, ref plumbing.ReferenceName, files map[string]string) {
	tb.Helper()
	commitWith(tb, repo, ref, "files\n", files)
}

// commitWith commits files on ref (the branch, for "") with message.
func commitWith(tb testing.TB, repo *vcs.Git, ref plumbing.ReferenceName, message string, files map[string]string) {
	tb.Helper()
	tip := plumbing.ZeroHash
	if ref == "" {
		var err error
		if _, tip, err = repo.Head(); err != nil {
			tb.Fatal(err)
		}
		if ref, err = repo.Branch(); err != nil {
			tb.Fatal(err)
		}
	}
	d, err := repo.NewDraft(tip)
	if err != nil {
		tb.Fatal(err)
	}
	for path, data := range files {
		if err := d.Put(path, []byte(data)); err != nil {
			tb.Fatal(err)
		}
	}
	if _, err := d.Commit(ref, message, time.Unix(100, 0)); err != nil {
		tb.Fatal(err)
	}
}

func line(tb testing.TB, e memory.Entry) string {
	raw, err := json.Marshal(e)
	if err != nil {
		tb.Fatal(err)
	}
	return string(raw) + "\n"
}

// Summaries says what Session's entries say: each entry once, first and last in time
// order, the source of the first that names one, whichever batch holds what.
func TestSummaries(t *testing.T) {
	const s = "s1"
	late := []memory.Entry{
		from(observation(s, 3, "three"), "codex"),
		observation(s, 4, "four"),
		event(s, 5, "native"),
	}
	early := []memory.Entry{
		observation(s, 1, "one"), // names no source
		from(observation(s, 2, "two"), "claude-code"),
		from(observation(s, 3, "three"), "codex"), // flushed twice: counted once
	}
	repo := commitBatches(t, s, late, early)
	entries, err := Session(repo, s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Summaries(repo, func(string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	want := summaryOf(entries)
	if len(got) != 1 || got[s] != want {
		t.Errorf("got %+v, want %s: %+v", got, s, want)
	}
	if want.Observations != 4 || want.Events != 1 || want.Source != "claude-code" {
		t.Errorf("the story changed: %+v", want)
	}

	got, err = Summaries(repo, func(id string) bool { return id == s })
	if err != nil || len(got) != 0 {
		t.Errorf("a session the journal knows: got %+v, %v; want none", got, err)
	}
}

// A record of a session the journal knows is not read past its first line.
func TestSummariesKnown(t *testing.T) {
	repo := commitBatches(t, "s1", []memory.Entry{observation("s1", 1, "one")})
	commitFiles(t, repo, "", map[string]string{
		render.CurrentLayout.SessionRecordPath("s1", "batch99"): line(t, observation("s1", 2, "two")) + "not json\n",
	})
	got, err := Summaries(repo, func(id string) bool { return id == "s1" })
	if err != nil || len(got) != 0 {
		t.Errorf("got %+v, %v; want none", got, err)
	}
	if _, err := Summaries(repo, func(string) bool { return false }); err == nil {
		t.Error("this repo's broken record, of a session to list: no error")
	}
}

// A session is read from this repo's branch if it holds it, else from the first fetched
// branch that does; a fetched branch's broken record adds nothing, not even its ids.
func TestSummariesFetched(t *testing.T) {
	mine := observation("s1", 1, "mine")
	repo := commitBatches(t, "s1", []memory.Entry{mine})
	theirs, lost := from(observation("s2", 2, "theirs"), "gemini"), observation("s2", 3, "lost")
	broken := render.CurrentLayout.SessionRecordPath("s2", "batch01")
	commitFiles(t, repo, "refs/remotes/origin/agents/other", map[string]string{
		render.CurrentLayout.SessionRecordPath("s1", "batch00"): line(t, observation("s1", 7, "also theirs")),
		broken: line(t, observation("s2", 0, "gone")) + line(t, lost) + `{"observation":{"id":5}}` + "\n",
		strings.TrimSuffix(broken, ".jsonl") + "-2.jsonl":       line(t, lost),
		render.CurrentLayout.SessionRecordPath("s2", "batch02"): line(t, lost) + line(t, theirs),
	})
	commitFiles(t, repo, "refs/remotes/origin/agents/zed", map[string]string{ // written before layout 2
		render.Layout1.SessionRecordPath("s2", "batch00"): line(t, observation("s2", 9, "later")),
	})
	got, err := Summaries(repo, func(string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Summary{
		"s1": summaryOf([]memory.Entry{mine}),
		"s2": {Repo: "origin/agents/other", First: theirs.Time(), Last: lost.Time(), Observations: 2, Source: "gemini", sourceAt: theirs.Time()},
	}
	if len(got) != len(want) || got["s1"] != want["s1"] || got["s2"] != want["s2"] {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// 10,000 observations of about 1 KiB in one batch (benchBatch), each naming its source.
func BenchmarkSummaries(b *testing.B) {
	s, batch := benchBatch(func(s string, i int, text string) memory.Entry {
		return from(observation(s, i, text), "native")
	})
	repo := commitBatches(b, s, batch)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Summaries(repo, func(string) bool { return false }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(batch))/b.Elapsed().Seconds(), "observations/s")
}
