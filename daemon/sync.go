package daemon

import (
	"context"
	"time"

	"github.com/agmem/agmem/gitsync"
	"github.com/agmem/agmem/maintain"
)

// maxPushBackoff bounds the wait before a failed push is tried again.
const maxPushBackoff = 5 * time.Minute

// PushReport is the last push the daemon tried.
type PushReport struct {
	At     time.Time `json:"at"`
	Remote string    `json:"remote"`
	As     string    `json:"as,omitempty"`  // the branch on the remote: agents/<repo id>
	Tip    string    `json:"tip,omitempty"` // the commit the remote has now
	Error  string    `json:"error,omitempty"`
	// RetryAt is when a failed push is tried again.
	RetryAt *time.Time `json:"retry_at,omitempty"`
}

// push pushes to Settings.Push.Remote (when set) at start, after each flush that
// committed something, and after a failure, waiting longer each time, up to
// maxPushBackoff. Flushes go on meanwhile: a push holds the writer lock only for as
// long as the remote takes, at most [sync] timeout, and a remote that is down costs
// nothing but a line in the log. Nothing waits for the last push at stop: the next
// start pushes what it did not.
func (d *Daemon) push(ctx context.Context, flushed <-chan struct{}) {
	var backoff time.Duration
	var retry <-chan time.Time
	for first := true; ; first = false {
		if !first {
			select {
			case <-ctx.Done():
				return
			case <-flushed:
			case <-retry:
			}
		}
		opts := d.current().Push
		if opts.Remote == "" {
			retry = nil
			continue
		}
		report := &PushReport{At: time.Now().UTC(), Remote: opts.Remote}
		p, err := gitsync.Push(d.Repo, opts)
		if err == nil {
			backoff, retry = 0, nil
			report.As, report.Tip = p.As.Short(), p.Tip.String()
			d.Log.Info("pushed", "remote", opts.Remote, "as", report.As, "tip", report.Tip, "up_to_date", p.UpToDate,
				"took", time.Since(report.At).Round(time.Millisecond).String())
		} else {
			backoff = min(max(2*backoff, 2*time.Second), maxPushBackoff)
			retry = time.After(backoff)
			at := time.Now().Add(backoff).UTC()
			report.Error, report.RetryAt = err.Error(), &at
			d.Log.Warn("push failed; the commits stay here and it is tried again", "remote", opts.Remote,
				"error", report.Error, "retry_in", backoff.String())
		}
		d.update(func(st *State) { st.LastPush = report })
	}
}

// gcEvery is how often the daemon runs agmem gc; firstGC is how long after its start
// it runs the first one when the journal notes none within gcEvery, and retryGC how long
// it waits after a gc that failed.
var (
	gcEvery = 24 * time.Hour
	firstGC = 10 * time.Minute
	retryGC = time.Hour
)

// collect runs agmem gc once a day, keeping Settings.Keep of committed sessions in the
// journal. The journal notes each gc, so that a daemon restarted more often than daily
// still runs one a day.
func (d *Daemon) collect(ctx context.Context) {
	next := time.Now().Add(firstGC)
	if last, err := d.Repo.Journal().LastGC(); err == nil && last != nil && last.At.Add(gcEvery).After(next) {
		next = last.At.Add(gcEvery)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(next)):
		}
		c, err := maintain.GC(d.Repo, d.current().Keep, time.Now())
		if err != nil {
			d.Log.Error("gc failed; it is tried again", "error", err.Error(), "retry_in", retryGC.String())
			next = time.Now().Add(retryGC)
			continue
		}
		d.Log.Info("gc", "forgot_sessions", c.Forgotten.Sessions, "forgot_entries", c.Forgotten.Entries,
			"journal_before", c.JournalBefore, "journal_after", c.JournalAfter,
			"objects_by", c.Objects.By, "objects_before", c.Objects.Before, "objects_after", c.Objects.After)
		next = time.Now().Add(gcEvery)
	}
}
