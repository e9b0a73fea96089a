package journal

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/agmem/agmem/memory"
)

// reported is a call as an agent reports it before it runs (Codex's PreToolUse): no
// result yet, and the same id as its result will have.
func reported(session, toolUseID string, at time.Time) memory.Entry {
	e := call(session, toolUseID, at)
	o := e.Observation
	o.Result, o.Error, o.NoResult = nil, "no result was reported", true
	return e
}

// answerOf is the result of the call reported, later.
func answerOf(report memory.Entry, at time.Time) memory.Entry {
	e := call(report.Session(), report.Observation.ToolUseID, at)
	e.Observation.ID = report.ID()
	e.Observation.Result = json.RawMessage(`"the result"`)
	return e
}

// TestCallReportedThenAnswered checks that a call reported before its result is kept
// once: its result, when it comes, takes its place (its id, its time, a duration from
// the two), in a later transaction or the same one; once committed it stays as it was.
func TestCallReportedThenAnswered(t *testing.T) {
	check := func(t *testing.T, j *Journal, id string) {
		t.Helper()
		got := timeline(t, j, "s")
		if len(got) != 1 {
			t.Fatalf("the timeline holds %d entries, want the call once", len(got))
		}
		o := got[0].Observation
		if o.ID != id || o.NoResult || o.Error != "" || string(o.Result) != `"the result"` || !o.Timestamp.Equal(t0) {
			t.Errorf("kept %+v; want the result, in the report's place", o)
		}
		if o.DurationMS == nil || *o.DurationMS != 1500 {
			t.Errorf("duration %v, want 1500 ms between the report and the result", o.DurationMS)
		}
		if s := session(t, j, "s"); s.Observations != 1 || s.Pending != 1 {
			t.Errorf("session counts %d observations, %d pending; want 1, 1", s.Observations, s.Pending)
		}
		if findings, err := j.Check(); err != nil || len(findings) > 0 {
			t.Errorf("journal check after the answer: %v, %v", findings, err)
		}
	}
	t.Run("later", func(t *testing.T) {
		j := newJournal(t)
		report := reported("s", "call_1", t0)
		mustAppend(t, j, t0, report)
		read, err := j.Since(0, func(memory.Entry) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		out := mustAppend(t, j, t0.Add(1500*time.Millisecond), answerOf(report, t0.Add(1500*time.Millisecond)))
		if out[0].ID != report.ID() || out[0].Duplicate {
			t.Errorf("the answer appended as %+v, want the report's id, not a duplicate", out[0])
		}
		check(t, j, report.ID())
		// a reader of the journal by sequence (the search index) reads the call again
		var again []memory.Entry
		if _, err := j.Since(read, func(e memory.Entry) error { again = append(again, e); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(again) != 1 || again[0].ID() != report.ID() || again[0].Observation.NoResult {
			t.Errorf("read since the report: %+v, want the answered call", again)
		}
	})
	t.Run("same transaction", func(t *testing.T) {
		j := newJournal(t)
		report := reported("s", "call_1", t0)
		mustAppend(t, j, t0, report, answerOf(report, t0.Add(1500*time.Millisecond)))
		check(t, j, report.ID())
	})
	t.Run("reported twice", func(t *testing.T) {
		j := newJournal(t)
		report := reported("s", "call_1", t0)
		mustAppend(t, j, t0, report)
		if out := mustAppend(t, j, t0, report); !out[0].Duplicate {
			t.Errorf("a second report is %+v, want a duplicate", out[0])
		}
	})
	t.Run("committed first", func(t *testing.T) {
		j := newJournal(t)
		report := reported("s", "call_1", t0)
		mustAppend(t, j, t0, report)
		later := t0.Add(2 * noResultWait)
		batches, err := j.PrepareBatches("", later)
		if err != nil || len(batches) != 1 {
			t.Fatalf("PrepareBatches = %d batches, %v; want the old report's", len(batches), err)
		}
		if out := mustAppend(t, j, later, answerOf(report, later)); !out[0].Duplicate {
			t.Errorf("the answer to a call taken for a commit is %+v, want a duplicate", out[0])
		}
	})
}

// TestFlushWaitsForTheResult checks that a flush leaves a call reported before its
// result pending while the result may still come, and takes it once an ending event of
// its session comes after it, or once it is old.
func TestFlushWaitsForTheResult(t *testing.T) {
	for _, c := range []struct {
		name   string
		after  []memory.Entry
		now    time.Time
		waits  bool
		events int
	}{
		{"young", nil, t0.Add(time.Minute), true, 0},
		{"young, the session went on", []memory.Entry{call("s", "call_2", t0.Add(time.Second))}, t0.Add(time.Minute), true, 0},
		{"the turn stopped after it", []memory.Entry{event("s", "Stop", t0.Add(time.Second))}, t0.Add(time.Minute), false, 1},
		{"the session ended after it", []memory.Entry{event("s", "SessionEnd", t0.Add(time.Second))}, t0.Add(time.Minute), false, 1},
		{"old", nil, t0.Add(noResultWait + time.Second), false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := newJournal(t)
			report := reported("s", "call_1", t0)
			mustAppend(t, j, t0, append([]memory.Entry{report}, c.after...)...)
			backlog, err := j.backlog(c.now)
			if err != nil {
				t.Fatal(err)
			}
			if (backlog.Waiting == 1) != c.waits || backlog.Observations+backlog.Waiting != 1+len(c.after)-c.events {
				t.Errorf("backlog %+v: the report counted as waiting: %v, want %v", backlog, backlog.Waiting == 1, c.waits)
			}
			batches, err := j.PrepareBatches("", c.now)
			if err != nil {
				t.Fatal(err)
			}
			var taken []string
			observations := 0
			for _, b := range batches {
				observations += b.Observations
				for _, e := range b.Entries {
					taken = append(taken, e.ID())
				}
			}
			if observations != len(taken)-c.events {
				t.Errorf("batches count %d observations of %d entries taken", observations, len(taken))
			}
			waited := true
			for _, id := range taken {
				if id == report.ID() {
					waited = false
				}
			}
			if waited != c.waits {
				t.Fatalf("the report waited: %v, want %v (taken: %v)", waited, c.waits, taken)
			}
			if !c.waits {
				return
			}
			// still pending: its result takes its place, and a later flush takes it
			mustAppend(t, j, c.now, answerOf(report, c.now))
			for _, b := range batches {
				if err := j.MarkCommitted(b, "c1", Signing{}); err != nil {
					t.Fatal(err)
				}
			}
			if err := j.Finish(batches, c.now); err != nil {
				t.Fatal(err)
			}
			again, err := j.PrepareBatches("c1", c.now)
			if err != nil || len(again) != 1 || len(again[0].Entries) != 1 {
				t.Fatalf("the next flush = %d batches, %v; want the answered call", len(again), err)
			}
			if o := again[0].Entries[0].Observation; o.ID != report.ID() || o.NoResult {
				t.Errorf("the next flush takes %+v, want the answered call", o)
			}
		})
	}
}
