package daemon

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"
)

// follow reads the followed files whenever fsnotify says their directory changed, and
// every pollEvery in any case: fsnotify misses changes on network file systems, and a
// directory that does not exist yet cannot be watched. When ctx is done it reads them
// one last time and returns.
func (d *Daemon) follow(ctx context.Context, reloaded <-chan struct{}) {
	var events <-chan fsnotify.Event
	var errs <-chan error
	w, err := fsnotify.NewWatcher()
	if err != nil {
		d.Log.Warn("cannot watch files for changes: reading them every poll instead", "error", err.Error())
	} else {
		defer w.Close()
		events, errs = w.Events, w.Errors
	}
	followers := map[string]*follower{}
	watched := map[string]bool{} // directories w watches
	defer func() {
		for _, fl := range followers {
			if fl.f != nil {
				fl.f.Close()
			}
		}
	}()
	read := func(fl *follower) {
		err := d.readAll(fl)
		problem := ""
		if err != nil {
			problem = err.Error()
		}
		if problem != fl.problem {
			if problem != "" {
				d.Log.Warn("cannot read a followed file", "path", fl.path, "problem", problem)
			}
			fl.problem = problem
			d.update(func(st *State) { st.watch(fl.path).Problem = problem })
		}
	}
	readEach := func() {
		for _, path := range slices.Sorted(maps.Keys(followers)) {
			read(followers[path])
		}
	}
	// watchDirs makes w watch the directory of each followed file, again and again
	// until it exists.
	watchDirs := func() {
		if w == nil {
			return
		}
		for path := range followers {
			if dir := filepath.Dir(path); !watched[dir] && w.Add(dir) == nil {
				watched[dir] = true
			}
		}
	}
	reconcile := func() {
		want := d.current().Watch
		for path, fl := range followers {
			if !slices.Contains(want, path) {
				if fl.f != nil {
					fl.f.Close()
				}
				delete(followers, path)
			}
		}
		marks, err := d.Repo.Journal().WatchMarks()
		if err != nil {
			d.Log.Error("cannot read the offsets of followed files; will try again", "error", err.Error())
			return
		}
		for _, path := range want {
			if followers[path] == nil {
				followers[path] = &follower{path: path, mark: marks[path]}
				d.Log.Info("following", "path", path, "from", marks[path].Offset)
				d.update(func(st *State) { st.watch(path).Offset = marks[path].Offset })
			}
		}
		watchDirs()
		readEach()
	}

	reconcile()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			readEach()
			return
		case <-reloaded:
			reconcile()
		case ev := <-events:
			if fl := followers[ev.Name]; fl != nil {
				read(fl)
			}
		case err := <-errs:
			d.Log.Warn("file watching", "error", err.Error())
		case <-tick.C:
			if len(followers) < len(d.current().Watch) {
				reconcile() // the offsets could not be read before
			}
			watchDirs()
			readEach()
		}
	}
}
