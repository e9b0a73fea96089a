package journal

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agmem/agmem/memory"
)

func TestAppendReturnsIDs(t *testing.T) {
	j := newJournal(t)
	a := observation("s1", "Read", memory.Semantic, t0)
	b := event("s1", "SessionStart", t0.Add(time.Second))
	got := mustAppend(t, j, t0, a, b)
	want := []Appended{{ID: a.ID()}, {ID: b.ID()}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Append = %+v, want %+v", got, want)
	}
	// What is stored is what was given.
	stored := timeline(t, j, "s1")
	if len(stored) != 2 || !reflect.DeepEqual(stored[0], a) || !reflect.DeepEqual(stored[1].Event, b.Event) {
		t.Errorf("Timeline = %+v, want the two entries as appended", stored)
	}
}

func TestAppendDuplicates(t *testing.T) {
	j := newJournal(t)
	first := call("s1", "toolu_1", t0)
	mustAppend(t, j, t0, first)

	sameID := first
	sameCall := call("s1", "toolu_1", t0.Add(time.Second)) // a hook retry: new id, same call
	otherSession := call("s2", "toolu_1", t0.Add(time.Second))
	inCall := call("s1", "toolu_2", t0.Add(2*time.Second))
	inCallAgain := call("s1", "toolu_2", t0.Add(3*time.Second))
	twice := observation("s1", "Read", memory.Semantic, t0.Add(4*time.Second))
	eventTwice := event("s1", "Stop", t0.Add(5*time.Second))

	tests := []struct {
		name    string
		entries []memory.Entry
		dup     []bool
	}{
		{"same id", []memory.Entry{sameID}, []bool{true}},
		{"same session and tool_use_id", []memory.Entry{sameCall}, []bool{true}},
		{"same tool_use_id in another session", []memory.Entry{otherSession}, []bool{false}},
		{"same tool_use_id twice in one call", []memory.Entry{inCall, inCallAgain}, []bool{false, true}},
		{"same id twice in one call", []memory.Entry{twice, twice}, []bool{false, true}},
		{"an event twice in one call", []memory.Entry{eventTwice, eventTwice}, []bool{false, true}},
		{"all of them again", []memory.Entry{first, sameCall, otherSession, inCall, inCallAgain, twice, eventTwice},
			[]bool{true, true, true, true, true, true, true}},
	}
	// A duplicate reports the id of the entry that was kept: a hook retry learns the id
	// its first try recorded.
	kept := map[string]string{sameCall.ID(): first.ID(), inCallAgain.ID(): inCall.ID()}
	for _, tt := range tests {
		got := mustAppend(t, j, t0, tt.entries...)
		for i, a := range got {
			if a.Duplicate != tt.dup[i] {
				t.Errorf("%s: entry %d Duplicate = %v, want %v", tt.name, i+1, a.Duplicate, tt.dup[i])
			}
			want := tt.entries[i].ID()
			if k, ok := kept[want]; ok && a.Duplicate {
				want = k
			}
			if a.ID != want {
				t.Errorf("%s: entry %d ID = %q, want %q", tt.name, i+1, a.ID, want)
			}
		}
	}

	wantS1 := []string{first.ID(), inCall.ID(), twice.ID(), eventTwice.ID()}
	if got := ids(timeline(t, j, "s1")); !reflect.DeepEqual(got, wantS1) {
		t.Errorf("s1 holds %q, want each entry once: %q", got, wantS1)
	}
	if got := ids(timeline(t, j, "s2")); !reflect.DeepEqual(got, []string{otherSession.ID()}) {
		t.Errorf("s2 holds %q, want %q", got, otherSession.ID())
	}
	s1 := session(t, j, "s1")
	if s1.Observations != 3 || s1.Events != 1 || s1.Pending != 3 || s1.PendingEvents != 1 {
		t.Errorf("s1 counts %+v; want 3 observations and 1 event, each counted once", s1)
	}
	batches, err := j.PrepareBatches("", t0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range batches {
		n += len(b.Seqs)
	}
	if n != 5 {
		t.Errorf("batches hold %d entries, want the 5 distinct ones", n)
	}
}

func TestAppendOpenSession(t *testing.T) {
	j := newJournal(t)
	noSession := func(at time.Time) memory.Entry { return observation("", "Read", memory.Semantic, at) }

	a, b := noSession(t0), event("", "UserPromptSubmit", t0)
	mustAppend(t, j, t0, a, b)
	s1 := a.Session()
	if s1 == "" || b.Session() != s1 {
		t.Fatalf("entries without a session got %q and %q; want one new session for both", s1, b.Session())
	}
	if err := memory.CheckSessionID(s1); err != nil {
		t.Errorf("open session id %q: %v", s1, err)
	}

	steps := []struct {
		name  string
		after time.Duration // since the previous activity
		same  bool
	}{
		{"within the gap", gap - time.Minute, true},
		{"within the gap, measured from the last activity", gap - time.Second, true},
		{"exactly the gap", gap, false},
		{"just after a new session started", time.Second, true},
		{"long idle", 24 * time.Hour, false},
	}
	now, current := t0, s1
	seen := map[string]bool{s1: true}
	for _, st := range steps {
		now = now.Add(st.after)
		e := noSession(now)
		mustAppend(t, j, now, e)
		switch {
		case st.same && e.Session() != current:
			t.Errorf("%s: session %q, want the open one %q", st.name, e.Session(), current)
		case !st.same && seen[e.Session()]:
			t.Errorf("%s: session %q, want a new one", st.name, e.Session())
		}
		current = e.Session()
		seen[current] = true
	}

	// An entry that names its session keeps it.
	named := observation("mine", "Read", memory.Semantic, now)
	mustAppend(t, j, now, named)
	if named.Session() != "mine" {
		t.Errorf("named session became %q", named.Session())
	}
	if got := session(t, j, s1); got.Observations != 3 || got.Events != 1 {
		t.Errorf("first open session: %+v; want 3 observations and 1 event", got)
	}
	if got := len(sessions(t, j)); got != 4 {
		t.Errorf("%d sessions, want 3 open ones and mine", got)
	}
}

func TestAppendIsAllOrNothing(t *testing.T) {
	tests := []struct {
		name    string
		bad     func() memory.Entry
		wantErr string
	}{
		{"no tool name", func() memory.Entry { return observation("s", "", memory.Episodic, t0) }, "tool_name"},
		{"control character in session", func() memory.Entry { return observation("s\nAgmem-Batch: x", "Read", memory.Semantic, t0) }, "control character"},
		{"session too long", func() memory.Entry {
			return observation(strings.Repeat("s", memory.MaxSessionIDLen+1), "Read", memory.Semantic, t0)
		}, "longer than"},
		{"both observation and event", func() memory.Entry {
			return memory.Entry{Observation: observation("s", "Read", memory.Semantic, t0).Observation,
				Event: event("s", "Stop", t0).Event}
		}, "exactly one"},
		{"neither observation nor event", func() memory.Entry { return memory.Entry{} }, "exactly one"},
		{"no id", func() memory.Entry {
			e := observation("s", "Read", memory.Semantic, t0)
			e.Observation.ID = ""
			return e
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := newJournal(t)
			good1 := call("s", "toolu_1", t0)
			good2 := observation("", "Read", memory.Semantic, t0.Add(time.Second))
			out, err := j.Append(Entries([]memory.Entry{good1, tt.bad(), good2}), AppendOptions{IdleGap: gap, Now: t0})
			if err == nil {
				t.Fatalf("Append with an invalid entry = %+v, want an error", out)
			}
			if !strings.Contains(err.Error(), "entry 2") || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not name entry 2 and %q", err, tt.wantErr)
			}
			if out != nil {
				t.Errorf("Append returned %+v with its error", out)
			}
			if got := sessions(t, j); len(got) != 0 {
				t.Errorf("after a failed Append the journal knows sessions %+v", got)
			}
			if got := timeline(t, j, "s"); len(got) != 0 {
				t.Errorf("after a failed Append session s holds %d entries", len(got))
			}
			if b, err := j.PrepareBatches("", t0); err != nil || len(b) != 0 {
				t.Errorf("after a failed Append PrepareBatches = %d batches, %v", len(b), err)
			}
			// Nothing was kept, so the same good entries are new the second time.
			good2.SetSession("")
			for i, a := range mustAppend(t, j, t0, good1, good2) {
				if a.Duplicate {
					t.Errorf("good entry %d reported a duplicate: the failed Append left it behind", i+1)
				}
			}
		})
	}
}

func TestTimelineOrder(t *testing.T) {
	j := newJournal(t)
	third := observation("s", "Bash", memory.Episodic, t0.Add(3*time.Second))
	first := event("s", "SessionStart", t0.Add(1*time.Second))
	second := observation("s", "Read", memory.Semantic, t0.Add(2*time.Second))
	tie := observation("s", "Grep", memory.Semantic, t0.Add(2*time.Second)) // same time: append order
	zeroth := event("s", "UserPromptSubmit", t0)
	other := observation("s-other", "Read", memory.Semantic, t0.Add(time.Second))
	prefix := observation("s2", "Read", memory.Semantic, t0.Add(time.Second))
	mustAppend(t, j, t0, third)
	mustAppend(t, j, t0, first, other)
	mustAppend(t, j, t0, second, prefix)
	mustAppend(t, j, t0, tie, zeroth)

	want := ids([]memory.Entry{zeroth, first, second, tie, third})
	if got := ids(timeline(t, j, "s")); !reflect.DeepEqual(got, want) {
		t.Errorf("Timeline(s) = %q, want time order %q", got, want)
	}
	if got := ids(timeline(t, j, "s2")); !reflect.DeepEqual(got, ids([]memory.Entry{prefix})) {
		t.Errorf("Timeline(s2) = %q; another session's entries leaked in", got)
	}
	if got := timeline(t, j, "nobody"); len(got) != 0 {
		t.Errorf("Timeline of an unknown session = %d entries", len(got))
	}
	if got := timeline(t, j, ""); len(got) != 0 {
		t.Errorf("Timeline of the empty session = %d entries", len(got))
	}

	info := session(t, j, "s")
	if !info.First.Equal(t0) || !info.Last.Equal(t0.Add(3*time.Second)) {
		t.Errorf("session s spans %s..%s, want %s..%s whatever the append order", info.First, info.Last, t0, t0.Add(3*time.Second))
	}
}

func TestTimelineStopsOnError(t *testing.T) {
	j := newJournal(t)
	for i := range 3 {
		mustAppend(t, j, t0, observation("s", "Read", memory.Semantic, t0.Add(time.Duration(i)*time.Second)))
	}
	stop := fmt.Errorf("reader went away")
	calls := 0
	err := j.Timeline("s", func(memory.Entry) error {
		calls++
		return stop
	})
	if err != stop || calls != 1 {
		t.Errorf("Timeline = %v after %d calls, want the callback's error after 1", err, calls)
	}
}

func TestTimelineAcrossChunks(t *testing.T) {
	for _, n := range []int{timelineChunk - 1, timelineChunk, timelineChunk + 1, 2500} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			j := newJournal(t)
			// Times in shuffled order, several entries sharing each time, so that both the
			// time and the tie-break matter across chunk edges.
			rng := rand.New(rand.NewPCG(1, uint64(n)))
			entries := make([]memory.Entry, n)
			for i, k := range rng.Perm(n) {
				entries[i] = observation("s", "Read", memory.Semantic, t0.Add(time.Duration(k/3)*time.Millisecond))
			}
			mustAppend(t, j, t0, entries...)
			mustAppend(t, j, t0, observation("s0", "Read", memory.Semantic, t0)) // a neighbour

			got := timeline(t, j, "s")
			if len(got) != n {
				t.Fatalf("Timeline gave %d entries, want %d", len(got), n)
			}
			seen := map[string]bool{}
			for i, e := range got {
				if seen[e.ID()] {
					t.Fatalf("entry %s given twice", e.ID())
				}
				seen[e.ID()] = true
				if i > 0 && e.Time().Before(got[i-1].Time()) {
					t.Fatalf("entry %d (%s) comes after a later one (%s)", i, e.Time(), got[i-1].Time())
				}
			}
			if info := session(t, j, "s"); info.Observations != n || info.Pending != n {
				t.Errorf("session counts %d observations, %d pending; want %d", info.Observations, info.Pending, n)
			}
		})
	}
}

func TestConcurrentAppend(t *testing.T) {
	const workers, perWorker = 8, 50
	j := newJournal(t)
	var wg sync.WaitGroup
	errs := make(chan error, workers*(perWorker+1))
	firsts := make(chan bool, workers)
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				e := call(fmt.Sprintf("s%d", w%2), fmt.Sprintf("toolu_%d_%d", w, i), t0.Add(time.Duration(i)*time.Millisecond))
				if _, err := j.Append(Entries([]memory.Entry{e}), AppendOptions{IdleGap: gap, Now: t0}); err != nil {
					errs <- err
					return
				}
			}
			// Every worker records the same call (a hook fired twice): one wins.
			out, err := j.Append(Entries([]memory.Entry{call("shared", "toolu_shared", t0)}), AppendOptions{IdleGap: gap, Now: t0})
			if err != nil {
				errs <- err
				return
			}
			firsts <- !out[0].Duplicate
		})
	}
	wg.Wait()
	close(errs)
	close(firsts)
	for err := range errs {
		t.Fatal(err)
	}
	won := 0
	for first := range firsts {
		if first {
			won++
		}
	}
	if won != 1 {
		t.Errorf("%d workers recorded the shared call as new, want exactly 1", won)
	}

	total := 0
	for _, s := range []string{"s0", "s1"} {
		got := timeline(t, j, s)
		seen := map[string]bool{}
		for _, e := range got {
			key := e.Observation.ToolUseID
			if seen[key] {
				t.Errorf("%s: call %s stored twice", s, key)
			}
			seen[key] = true
		}
		if len(got) != workers/2*perWorker {
			t.Errorf("%s holds %d entries, want %d", s, len(got), workers/2*perWorker)
		}
		total += len(got)
	}
	if got := timeline(t, j, "shared"); len(got) != 1 {
		t.Errorf("shared session holds %d entries, want 1", len(got))
	}
	if total != workers*perWorker {
		t.Errorf("%d entries stored, want %d", total, workers*perWorker)
	}
}

// The journal stores an entry as it was given: its JSON shape is the one replay prints.
func TestAppendKeepsEveryField(t *testing.T) {
	j := newJournal(t)
	d := int64(3120)
	e := call("s", "toolu_9", t0.Add(123456789*time.Nanosecond))
	o := e.Observation
	o.Result = json.RawMessage(`{"stdout":"ok","n":[1,2]}`)
	o.Cwd, o.AgentID, o.DurationMS, o.Error = "/w", "a1", &d, "exit 1"
	ev := event("s", "SessionStart", t0)
	ev.Event.Text, ev.Event.Attrs = "startup", map[string]string{"model": "m"}
	mustAppend(t, j, t0, e, ev)
	got := timeline(t, j, "s")
	if len(got) != 2 || !reflect.DeepEqual(got[0].Event, ev.Event) || !reflect.DeepEqual(got[1].Observation, o) {
		t.Errorf("stored entries differ from the appended ones:\n%+v\n%+v", got[0].Event, got[1].Observation)
	}
}

// TestImportLeavesTheOpenSessionAlone imports a session's start and end between two
// records of the live agent: both records are in one session.
func TestImportLeavesTheOpenSessionAlone(t *testing.T) {
	j := newJournal(t)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	first := observation("", "Read", memory.Semantic, t0)
	if _, err := j.Append(Entries([]memory.Entry{first}), AppendOptions{IdleGap: time.Hour, Now: t0}); err != nil {
		t.Fatal(err)
	}
	old := t0.AddDate(-1, 0, 0)
	if _, err := j.Append(Entries([]memory.Entry{event("old", "SessionStart", old), observation("old", "Bash", memory.Episodic, old), event("old", "SessionEnd", old)}), AppendOptions{Elsewhere: true}); err != nil {
		t.Fatal(err)
	}
	second := observation("", "Read", memory.Semantic, t0.Add(time.Second))
	if _, err := j.Append(Entries([]memory.Entry{second}), AppendOptions{IdleGap: time.Hour, Now: t0.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	if first.Session() != second.Session() {
		t.Errorf("an import split the live session: %s, then %s", first.Session(), second.Session())
	}
	if _, err := j.Append(Entries([]memory.Entry{observation("", "Read", memory.Semantic, t0)}), AppendOptions{Elsewhere: true}); err == nil {
		t.Error("Import took an entry without a session")
	}
}
