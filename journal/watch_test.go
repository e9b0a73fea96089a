package journal

import (
	"reflect"
	"testing"
	"time"

	"github.com/agmem/agmem/memory"
)

func TestAppendWatchedMovesTheMarkWithTheEntries(t *testing.T) {
	j := newJournal(t)
	a := observation("s", "Read", memory.Semantic, t0)
	if _, err := j.Append(Entries([]memory.Entry{a}), AppendOptions{IdleGap: gap, Now: t0, Watched: &Watched{Path: "/tmp/a.jsonl", Mark: WatchMark{Offset: 120, File: "f1"}}}); err != nil {
		t.Fatal(err)
	}
	// A line that fails keeps the whole read unrecorded: no entry, and the mark stays.
	bad := observation("s", "", memory.Semantic, t0)
	good := observation("s", "Grep", memory.Semantic, t0)
	if _, err := j.Append(Entries([]memory.Entry{good, bad}), AppendOptions{IdleGap: gap, Now: t0, Watched: &Watched{Path: "/tmp/a.jsonl", Mark: WatchMark{Offset: 240, File: "f1"}}}); err == nil {
		t.Fatal("AppendWatched with an invalid entry succeeded")
	}
	// A read with nothing worth recording still moves the mark.
	if _, err := j.Append(Entries(nil), AppendOptions{IdleGap: gap, Now: t0, Watched: &Watched{Path: "/tmp/b.jsonl", Mark: WatchMark{Offset: 7}}}); err != nil {
		t.Fatal(err)
	}
	marks, err := j.WatchMarks()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]WatchMark{"/tmp/a.jsonl": {Offset: 120, File: "f1"}, "/tmp/b.jsonl": {Offset: 7}}
	if !reflect.DeepEqual(marks, want) {
		t.Errorf("WatchMarks = %+v, want %+v", marks, want)
	}
	if got := ids(timeline(t, j, "s")); !reflect.DeepEqual(got, []string{a.ID()}) {
		t.Errorf("session holds %q, want only the first read's entry", got)
	}
}

func TestBacklog(t *testing.T) {
	j := newJournal(t)
	check := func(when string, want Backlog) {
		t.Helper()
		got, err := j.Backlog()
		if err != nil {
			t.Fatal(err)
		}
		if got != want || got.Empty() != (want == Backlog{}) {
			t.Errorf("%s: Backlog = %+v, want %+v", when, got, want)
		}
	}
	check("empty", Backlog{})
	mustAppend(t, j, t0, observation("s1", "Read", memory.Semantic, t0), event("s1", "SessionStart", t0),
		observation("s2", "Bash", memory.Episodic, t0))
	check("after append", Backlog{Observations: 2, Events: 1})
	if _, err := j.PrepareBatches("", t0); err != nil {
		t.Fatal(err)
	}
	check("after a flush planned its batches", Backlog{Batches: 2})
}

func TestSessionStartAndEndOpenANewSession(t *testing.T) {
	j := newJournal(t)
	anon := func() memory.Entry { return observation("", "Read", memory.Semantic, t0) }
	first, second := anon(), anon()
	mustAppend(t, j, t0, first)
	mustAppend(t, j, t0, second)
	if first.Session() != second.Session() {
		t.Fatalf("two records without a session went to %q and %q, want the open one", first.Session(), second.Session())
	}

	// An agent's SessionStart, with its own session, ends agmem's open one.
	mustAppend(t, j, t0, event("claude-1", "SessionStart", t0))
	afterStart := anon()
	mustAppend(t, j, t0, afterStart)
	if afterStart.Session() == first.Session() || afterStart.Session() == "claude-1" {
		t.Errorf("after a SessionStart a record without a session went to %q, want a new session", afterStart.Session())
	}

	// A SessionEnd without a session ends the open session it belongs to; a SessionStart
	// without one begins the session the entries after it join, in one call too.
	end, start, inNew := event("", "SessionEnd", t0), event("", "SessionStart", t0), anon()
	mustAppend(t, j, t0, end, start, inNew)
	if end.Session() != afterStart.Session() {
		t.Errorf("SessionEnd went to %q, want the open session %q", end.Session(), afterStart.Session())
	}
	if start.Session() == end.Session() || inNew.Session() != start.Session() {
		t.Errorf("SessionStart in %q and the record after it in %q, want one new session", start.Session(), inNew.Session())
	}
	later := anon()
	mustAppend(t, j, t0.Add(time.Minute), later)
	if later.Session() != start.Session() {
		t.Errorf("a later record went to %q, want the session the SessionStart began %q", later.Session(), start.Session())
	}
}
