package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agmem/agmem/internal/flock"
	"github.com/agmem/agmem/internal/memrepo"
)

// Files of the daemon in a memory repo's state directory.
const (
	lockName  = "daemon.lock"
	stateName = "daemon.json"
	logName   = "daemon.log"
)

// LogPath is where the daemon of the repo whose state directory is stateDir logs.
func LogPath(stateDir string) string { return filepath.Join(stateDir, logName) }

// State is what a daemon says of itself in .agmem/daemon.json.
type State struct {
	PID        int          `json:"pid"`
	StartedAt  time.Time    `json:"started_at"`
	StoppedAt  *time.Time   `json:"stopped_at,omitempty"`
	Interval   string       `json:"interval"`
	MaxPending int          `json:"max_pending"`
	Watch      []WatchState `json:"watch"`
	LastFlush  *FlushReport `json:"last_flush,omitempty"`
	NextFlush  *time.Time   `json:"next_flush,omitempty"`
	LastPush   *PushReport  `json:"last_push,omitempty"`
	Counters   Counters     `json:"counters"`
	// Error is why a daemon stopped with an error: its final flush failed.
	Error string `json:"error,omitempty"`
}

// WatchState is how far the daemon has read a file it follows.
type WatchState struct {
	Path   string `json:"path"`
	Offset int64  `json:"offset"`
	// Problem is why the file cannot be read now, such as that it does not exist yet.
	Problem string `json:"problem,omitempty"`
}

// FlushReport is one flush the daemon ran.
type FlushReport struct {
	At           time.Time `json:"at"`
	Trigger      string    `json:"trigger"` // "recover", "interval", "max_pending" or "stop"
	Commits      int       `json:"commits"`
	Observations int       `json:"observations"`
	Error        string    `json:"error,omitempty"`
}

// Counters add up what a daemon did since it started.
type Counters struct {
	Recorded     int `json:"recorded"` // entries recorded from followed files
	Flushes      int `json:"flushes"`
	Failed       int `json:"failed_flushes"`
	Commits      int `json:"commits"`
	Observations int `json:"flushed_observations"`
}

// Report is what `agmem daemon status` says: whether a daemon runs, its state if it
// does, and what is pending now.
type Report struct {
	Running bool `json:"running"`
	*State
	Pending       int `json:"pending_observations"`
	PendingEvents int `json:"pending_events"`
}

// Status reports on the daemon of repo.
func Status(repo memrepo.Repo) (Report, error) {
	st, err := Probe(repo)
	if err != nil && !errors.Is(err, ErrNotRunning) {
		return Report{}, err
	}
	backlog, berr := repo.Journal().Backlog()
	if berr != nil {
		return Report{}, berr
	}
	return Report{Running: err == nil, State: st, Pending: backlog.Observations, PendingEvents: backlog.Events}, nil
}

// RunningError says that a daemon already runs for the repo.
type RunningError struct{ PID int }

func (e *RunningError) Error() string {
	if e.PID == 0 {
		return "the daemon is already running"
	}
	return fmt.Sprintf("the daemon is already running (pid %d)", e.PID)
}

// ErrNotRunning is returned when no daemon runs for the repo.
var ErrNotRunning = errors.New("the daemon is not running")

// Probe says whether a daemon runs for repo, and returns its state if so. It takes the
// daemon's lock for an instant when it is free, which a daemon starting at that moment
// waits out.
func Probe(repo memrepo.Repo) (*State, error) {
	lock, err := flock.TryAcquire(filepath.Join(repo.StateDir(), lockName))
	if err == nil {
		lock.Release()
		return nil, ErrNotRunning
	}
	if !errors.Is(err, flock.ErrTimeout) {
		return nil, err
	}
	st, err := readState(repo.StateDir())
	if err != nil {
		// The lock is held but the state not written yet, or unreadable: it runs all the same.
		return &State{}, nil
	}
	return st, nil
}

func readState(stateDir string) (*State, error) {
	data, err := os.ReadFile(filepath.Join(stateDir, stateName))
	if err != nil {
		return nil, err
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("read %s: %w", stateName, err)
	}
	return &st, nil
}

// writeState replaces the state file whole, so that a reader never sees half of it.
func writeState(stateDir string, st *State) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(stateDir, stateName)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", stateName, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", stateName, err)
	}
	return nil
}
