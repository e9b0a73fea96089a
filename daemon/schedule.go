package daemon

import (
	"context"
	"os"
	"time"

	"github.com/agmem/agmem/flush"
	"github.com/agmem/agmem/journal"
	"github.com/agmem/agmem/recall"
	"github.com/agmem/agmem/vcs"
)

// maxBackoff bounds the wait before a failed flush is tried again (or the interval, if
// shorter).
const maxBackoff = time.Minute

// schedule flushes every Interval, and as soon as MaxPending observations are pending,
// which starts the interval again. It counts the pending observations only when the
// journal file changed since it last did, and never holds the journal between counts.
// After a failed flush it waits, longer each time, before it tries again. It returns
// when ctx is done, after the flush under way if there is one.
func (d *Daemon) schedule(ctx context.Context, reloaded <-chan struct{}) {
	last := time.Now()
	var backoff time.Duration
	var retryAt time.Time
	var seen os.FileInfo // the journal file when it was last counted
	var backlog journal.Backlog
	var told time.Time // the next flush the state file says
	for {
		s := d.current()
		next := last.Add(s.Interval)
		if retryAt.After(next) {
			next = retryAt
		}
		if !next.Equal(told) {
			told = next
			d.update(func(st *State) { at := next.UTC(); st.NextFlush = &at })
		}
		select {
		case <-ctx.Done():
			return
		case <-reloaded:
			continue
		case <-d.recorded:
		case <-time.After(min(pollEvery, time.Until(next))):
		}

		now := time.Now()
		if fi, err := os.Stat(d.Repo.Journal().Path()); err == nil && !sameStamp(fi, seen) {
			if b, err := d.Repo.Journal().Backlog(); err != nil {
				d.Log.Warn("cannot count pending observations", "error", err.Error())
			} else {
				backlog, seen = b, fi
			}
		}
		trigger := ""
		switch {
		case now.Before(retryAt):
		case !now.Before(next):
			trigger = "interval"
		case backlog.Observations >= s.MaxPending:
			trigger = "max_pending"
		}
		if trigger == "" {
			continue
		}
		report := d.flushIf(trigger, pending)
		last = time.Now()
		switch {
		case report != nil && report.Error != "":
			backoff = min(max(2*backoff, 2*time.Second), maxBackoff, s.Interval)
			retryAt = last.Add(backoff)
		default:
			backoff, retryAt = 0, time.Time{}
		}
	}
}

// sameStamp is true if the journal file a and b describe was not written in between.
func sameStamp(a, b os.FileInfo) bool {
	return b != nil && a.ModTime().Equal(b.ModTime()) && a.Size() == b.Size()
}

// pending is true if a flush would have anything to do.
func pending(b journal.Backlog) bool { return !b.Empty() }

// unfinished is true if a flush that died left batches behind.
func unfinished(b journal.Backlog) bool { return b.Batches > 0 }

// flushIf flushes if the backlog is needed, and reports the flush, or nil if there was
// none.
func (d *Daemon) flushIf(trigger string, needed func(journal.Backlog) bool) *FlushReport {
	backlog, err := d.Repo.Journal().Backlog()
	if err == nil && !needed(backlog) {
		return nil
	}
	report := &FlushReport{At: time.Now().UTC(), Trigger: trigger}
	if err == nil {
		err = d.flush(report)
	}
	if err != nil {
		report.Error = err.Error()
		d.Log.Error("flush failed; nothing recorded is lost, it is tried again", "trigger", trigger, "error", report.Error)
	} else {
		d.Log.Info("flushed", "trigger", trigger, "commits", report.Commits, "observations", report.Observations,
			"took", time.Since(report.At).Round(time.Millisecond).String())
		if report.Commits > 0 {
			nudge(d.flushed)
		}
	}
	d.update(func(st *State) {
		st.LastFlush = report
		st.Counters.Flushes++
		st.Counters.Commits += report.Commits
		st.Counters.Observations += report.Observations
		if report.Error != "" {
			st.Counters.Failed++
		}
	})
	return report
}

func (d *Daemon) flush(report *FlushReport) error {
	git, err := vcs.Open(d.Repo.Root)
	if err != nil {
		return err
	}
	opts := d.current().Flush
	opts.Warn = func(err error) { d.Log.Warn("flush", "warning", err.Error()) }
	commits, err := flush.Run(d.Repo.StateDir(), d.Repo.Journal(), git, opts)
	report.Commits = len(commits)
	for _, c := range commits {
		report.Observations += c.Observations
	}
	if len(commits) > 0 {
		// Derived, and made again by whoever reads it next: a failure is no flush's.
		if _, ierr := recall.UpdateIndex(d.Repo.StateDir(), git, d.Repo.Journal()); ierr != nil {
			d.Log.Warn("search index not updated", "error", ierr.Error())
		}
	}
	return err
}
