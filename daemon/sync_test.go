package daemon

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/agmem/agmem/flush"
	"github.com/agmem/agmem/journal"
	"github.com/agmem/agmem/maintain"
	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/vcs"
)

// TestDaemonCollectsGarbageOnSchedule runs the daemon with a day shortened to a fraction
// of a second: it runs gc, which forgets a month-old committed session, and runs it
// again a "day" later.
func TestDaemonCollectsGarbageOnSchedule(t *testing.T) {
	first, every := firstGC, gcEvery
	firstGC, gcEvery = 0, 300*time.Millisecond
	defer func() { firstGC, gcEvery = first, every }()

	repo, _, err := maintain.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	j := repo.Journal()
	old := time.Now().Add(-30 * 24 * time.Hour)
	o := &memory.Observation{ID: memory.NewID(old), SessionID: "old", Timestamp: old, ToolName: "Read",
		Arguments: json.RawMessage(`{}`), MemoryType: memory.Semantic}
	if _, err := j.Append(journal.Entries([]memory.Entry{{Observation: o}}), journal.AppendOptions{IdleGap: time.Minute, Now: old}); err != nil {
		t.Fatal(err)
	}
	git, err := vcs.Open(repo.Root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := flush.Run(repo.StateDir(), j, git, flush.Options{}); err != nil {
		t.Fatal(err)
	}

	d := &Daemon{Repo: repo, Log: slog.New(slog.DiscardHandler), Load: func() (Settings, error) {
		return Settings{Interval: time.Hour, MaxPending: 100, Keep: 7 * 24 * time.Hour}, nil
	}}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, nil, func(int) {}) }()
	var seen []time.Time
	for deadline := time.Now().Add(5 * time.Second); len(seen) < 2 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if last, err := j.LastGC(); err == nil && last != nil && (len(seen) == 0 || last.At.After(seen[len(seen)-1])) {
			seen = append(seen, last.At)
		}
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(seen) < 2 {
		t.Fatalf("the daemon ran gc %d time(s) in 5 s, with a day of %s", len(seen), gcEvery)
	}
	if _, known, err := j.Session("old"); err != nil || known {
		t.Errorf("after the daemon's gc the journal still knows the month-old session: %v %v", known, err)
	}
}
