package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/agmem/agmem/flush"
	"github.com/agmem/agmem/gitsync"
	"github.com/agmem/agmem/internal/flock"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/record"
)

// pollEvery is how often the daemon looks at the journal's size and at followed files
// when nothing told it to.
const pollEvery = 500 * time.Millisecond

// lockWait is how long a starting daemon waits for its lock: long enough to wait out a
// status probe, which holds it for an instant, short enough to say at once that another
// daemon runs.
const lockWait = 250 * time.Millisecond

// Settings are what a daemon does. Load gives them at start and again on SIGHUP.
type Settings struct {
	// Interval is the time between flushes; MaxPending pending observations flush at
	// once and start the interval again.
	Interval   time.Duration
	MaxPending int
	// Watch are the absolute paths of the JSONL files followed.
	Watch []string
	// Recorder records the followed files' lines, by the memory repo's configuration.
	Recorder *record.Recorder
	Flush    flush.Options
	// Push is where to push after each flush that commits something; Remote "" is
	// nowhere. Keep is how long the daily gc keeps committed sessions in the journal.
	Push gitsync.Options
	Keep time.Duration
}

// Daemon is the daemon of one memory repo.
type Daemon struct {
	Repo memrepo.Repo
	Load func() (Settings, error)
	Log  *slog.Logger

	mu       sync.Mutex
	settings Settings
	state    State
	recorded chan struct{} // tells the scheduler that a followed file was recorded
	flushed  chan struct{} // tells the pusher that a flush committed something
}

// Run is the daemon's life. It takes the repo's daemon lock, writes its state and calls
// ready; it finishes a flush that an earlier run left, then flushes on schedule and
// follows the watched files until ctx is done; then it reads the followed files one last
// time, flushes, and returns. Each value on reload makes it Load its settings again.
func (d *Daemon) Run(ctx context.Context, reload <-chan os.Signal, ready func(pid int)) error {
	settings, err := d.Load()
	if err != nil {
		return err
	}
	lockPath := filepath.Join(d.Repo.StateDir(), lockName)
	lock, err := flock.Acquire(lockPath, lockWait)
	if errors.Is(err, flock.ErrTimeout) {
		running := &RunningError{}
		if st, err := readState(d.Repo.StateDir()); err == nil {
			running.PID = st.PID
		}
		return running
	}
	if err != nil {
		return err
	}
	defer lock.Release()
	held, err := os.Stat(lockPath)
	if err != nil {
		return err
	}

	d.settings = settings
	d.recorded = make(chan struct{}, 1)
	d.flushed = make(chan struct{}, 1)
	d.state = State{PID: os.Getpid(), StartedAt: time.Now().UTC(), Watch: []WatchState{}}
	d.state.describe(settings)
	if err := d.save(); err != nil {
		return err
	}
	d.Log.Info("started", "pid", d.state.PID, "repo", d.Repo.Root, "interval", settings.Interval.String(),
		"max_pending", settings.MaxPending, "watch", settings.Watch)
	ready(d.state.PID)

	// What pending entries wait for is the schedule; what a killed flush left is finished
	// now.
	d.flushIf("recover", unfinished)
	loops, stop := context.WithCancel(ctx)
	defer stop()
	toFollow, toSchedule := make(chan struct{}, 1), make(chan struct{}, 1)
	var wg sync.WaitGroup
	wg.Go(func() { d.follow(loops, toFollow) })
	wg.Go(func() { d.schedule(loops, toSchedule) })
	wg.Go(func() { d.push(loops, d.flushed) })
	wg.Go(func() { d.collect(loops) })
	check := time.NewTicker(pollEvery)
	for loops.Err() == nil {
		select {
		case <-loops.Done():
		case <-reload:
			if d.reload() {
				nudge(toFollow)
				nudge(toSchedule)
			}
		case <-check.C:
			// A daemon whose lock file is gone (its repo deleted) no longer keeps others
			// from starting: it stops.
			if now, err := os.Stat(lockPath); err != nil || !os.SameFile(now, held) {
				d.Log.Warn("the daemon's lock file is gone: stopping", "path", lockPath)
				stop()
			}
		}
	}
	check.Stop()
	d.Log.Info("stopping: reading the followed files a last time, then flushing")
	wg.Wait()
	final := d.flushIf("stop", pending)
	d.update(func(st *State) {
		now := time.Now().UTC()
		st.StoppedAt, st.NextFlush = &now, nil
		if final != nil && final.Error != "" {
			st.Error = "final flush: " + final.Error
		}
	})
	if final != nil && final.Error != "" {
		return fmt.Errorf("final flush: %s", final.Error)
	}
	d.Log.Info("stopped")
	return nil
}

func nudge(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// current is the settings now in force.
func (d *Daemon) current() Settings {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.settings
}

// reload loads the settings again; on an error it keeps the ones in force.
func (d *Daemon) reload() bool {
	s, err := d.Load()
	if err != nil {
		d.Log.Error("reload: keeping the settings in force", "error", err.Error())
		return false
	}
	d.mu.Lock()
	d.settings = s
	d.mu.Unlock()
	d.update(func(st *State) { st.describe(s) })
	d.Log.Info("reloaded", "interval", s.Interval.String(), "max_pending", s.MaxPending, "watch", s.Watch)
	return true
}

// update changes the daemon's state and writes it out.
func (d *Daemon) update(change func(*State)) {
	d.mu.Lock()
	change(&d.state)
	d.mu.Unlock()
	if err := d.save(); err != nil {
		d.Log.Warn("cannot write the daemon's state", "error", err.Error())
	}
}

func (d *Daemon) save() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return writeState(d.Repo.StateDir(), &d.state)
}

// describe notes settings in the state: what status shows.
func (st *State) describe(s Settings) {
	st.Interval, st.MaxPending = s.Interval.String(), s.MaxPending
	var watch []WatchState
	for _, path := range s.Watch {
		watch = append(watch, *st.watch(path))
	}
	st.Watch = watch
}

// watch is the state of the followed file path, added if missing.
func (st *State) watch(path string) *WatchState {
	for i := range st.Watch {
		if st.Watch[i].Path == path {
			return &st.Watch[i]
		}
	}
	st.Watch = append(st.Watch, WatchState{Path: path})
	return &st.Watch[len(st.Watch)-1]
}
