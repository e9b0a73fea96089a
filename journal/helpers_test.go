package journal

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/agmem/agmem/memory"
)

const gap = 30 * time.Minute

var t0 = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

// newJournal is an empty journal in a directory of its own, as in a fresh memory repo.
func newJournal(t testing.TB) *Journal {
	t.Helper()
	j := At(t.TempDir())
	if err := j.Create(); err != nil {
		t.Fatal(err)
	}
	return j
}

// observation is a captured call as capture returns it.
func observation(session, tool string, typ memory.Type, at time.Time) memory.Entry {
	return memory.Entry{Observation: &memory.Observation{
		ID: memory.NewID(at), SessionID: session, Timestamp: at, ToolName: tool,
		Arguments: json.RawMessage(`{"path":"a.md"}`), Result: json.RawMessage(`"some result"`),
		MemoryType: typ, Summary: tool + " path=a.md", Source: "test",
	}}
}

func call(session, toolUseID string, at time.Time) memory.Entry {
	e := observation(session, "Bash", memory.Episodic, at)
	e.Observation.ToolUseID = toolUseID
	return e
}

func event(session, name string, at time.Time) memory.Entry {
	return memory.Entry{Event: &memory.Event{ID: memory.NewID(at), SessionID: session,
		Timestamp: at, Name: name, Source: "test"}}
}

func mustAppend(t testing.TB, j *Journal, now time.Time, entries ...memory.Entry) []Appended {
	t.Helper()
	out, err := j.Append(Entries(entries), AppendOptions{IdleGap: gap, Now: now})
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	if len(out) != len(entries) {
		t.Fatalf("Append of %d entries reported %d", len(entries), len(out))
	}
	return out
}

func timeline(t testing.TB, j *Journal, session string) []memory.Entry {
	t.Helper()
	var out []memory.Entry
	if err := j.Timeline(session, func(e memory.Entry) error {
		out = append(out, e)
		return nil
	}); err != nil {
		t.Fatalf("Timeline(%s): %v", session, err)
	}
	return out
}

func ids(entries []memory.Entry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.ID()
	}
	return out
}

func session(t testing.TB, j *Journal, id string) SessionInfo {
	t.Helper()
	info, ok, err := j.Session(id)
	if err != nil {
		t.Fatalf("Session(%s): %v", id, err)
	}
	if !ok {
		t.Fatalf("Session(%s): the journal does not know it", id)
	}
	return info
}

func sessions(t testing.TB, j *Journal) []SessionInfo {
	t.Helper()
	out, err := j.Sessions()
	if err != nil {
		t.Fatalf("Sessions: %v", err)
	}
	return out
}

// PrepareBatches plans a batch per session (PlanBatches, unbounded) and loads every
// batch not finished, oldest first, those it planned not Resumed: what a flush of a
// small journal works on.
func (j *Journal) PrepareBatches(base string, now time.Time) ([]*Batch, error) {
	planned, err := j.PlanBatches(base, now, 0)
	if err != nil {
		return nil, err
	}
	batches, err := j.Leftovers(math.MaxInt, math.MaxInt)
	for _, b := range batches {
		b.Resumed = !slices.Contains(planned, b.ID)
	}
	return batches, err
}
