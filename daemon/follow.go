package daemon

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/agmem/agmem/journal"
)

// fingerprintSpan is how much of a followed file, at its start and just before the
// mark, tells it from another file later found at the same path.
const fingerprintSpan = 1024

// follower reads one followed file: whatever file is at its path now, past the mark the
// journal holds for it.
type follower struct {
	path    string
	f       *os.File // the file being read; nil until one exists at path
	mark    journal.WatchMark
	problem string // why the file cannot be read now, logged once
}

// readAll records every complete line the file at fl's path holds past the mark. A file
// that replaced the one being read (log rotation) is read after what the old one still
// holds; a file truncated or rewritten under the mark is read again from its start.
func (d *Daemon) readAll(fl *follower) error {
	if fl.f != nil && !fl.atPath() {
		if err := d.drain(fl); err != nil {
			return err
		}
		if fi, err := fl.f.Stat(); err == nil && fi.Size() > fl.mark.Offset {
			d.Log.Warn("a followed file was replaced with an incomplete last line, which is not recorded",
				"path", fl.path, "at", fl.mark.Offset)
		}
		fl.f.Close()
		fl.f = nil
		d.Log.Info("followed file was replaced or removed", "path", fl.path)
	}
	if fl.f == nil {
		f, err := os.Open(fl.path)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return errors.New("does not exist yet")
			}
			return err
		}
		fl.f = f
		if !fl.fits() {
			d.Log.Info("a new file is at a followed path: reading it from its start", "path", fl.path)
			fl.mark = journal.WatchMark{}
		}
	} else if !fl.fits() {
		d.Log.Info("followed file was truncated or rewritten: reading it from its start", "path", fl.path)
		fl.mark = journal.WatchMark{}
	}
	return d.drain(fl)
}

// atPath is true if the open file is still the one at fl's path.
func (fl *follower) atPath() bool {
	at, err := os.Stat(fl.path)
	if err != nil {
		return false
	}
	open, err := fl.f.Stat()
	return err == nil && os.SameFile(at, open)
}

// fits is true if the open file holds, under the mark, what was read from it.
func (fl *follower) fits() bool {
	fi, err := fl.f.Stat()
	return err == nil && fi.Size() >= fl.mark.Offset && fingerprint(fl.f, fl.mark.Offset) == fl.mark.File
}

// fingerprint names the first off bytes of f by the span at its start and the span
// before off; "" for none.
func fingerprint(f *os.File, off int64) string {
	if off == 0 {
		return ""
	}
	n := min(off, fingerprintSpan)
	buf := make([]byte, 2*n)
	if _, err := f.ReadAt(buf[:n], 0); err != nil {
		return "unreadable"
	}
	if _, err := f.ReadAt(buf[n:], off-n); err != nil {
		return "unreadable"
	}
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:16])
}

// drain records the open file's complete lines past the mark, a batch per transaction.
// After a failed write the mark is read again from the journal: a write that committed
// but reported an error moved it, and its lines are not read twice.
func (d *Daemon) drain(fl *follower) error {
	for {
		fi, err := fl.f.Stat()
		if err != nil {
			return err
		}
		if fi.Size() <= fl.mark.Offset {
			return nil
		}
		rec := d.current().Recorder
		from := fl.mark.Offset
		end, out, err := rec.Follow(fl.path, io.NewSectionReader(fl.f, from, fi.Size()-from), from,
			func(end int64) journal.WatchMark { return journal.WatchMark{Offset: end, File: fingerprint(fl.f, end)} })
		if err != nil {
			if marks, merr := d.Repo.Journal().WatchMarks(); merr == nil {
				if m, ok := marks[fl.path]; ok && m.Offset > fl.mark.Offset && fingerprint(fl.f, m.Offset) == m.File {
					fl.mark = m
				}
			}
			return fmt.Errorf("record: %w", err)
		}
		if end == from {
			return nil // only a line still being written
		}
		fl.mark = journal.WatchMark{Offset: end, File: fingerprint(fl.f, end)}
		recorded := 0
		for _, r := range out.Recorded {
			if !r.Duplicate {
				recorded++
			}
		}
		for _, refused := range out.Refused {
			d.Log.Warn("line not recorded", "path", fl.path, "error", refused.Error())
		}
		for _, why := range out.NotCaptured {
			d.Log.Debug("not captured", "path", fl.path, "why", why)
		}
		d.Log.Info("recorded from a followed file", "path", fl.path, "recorded", recorded, "offset", end)
		d.update(func(st *State) {
			st.Counters.Recorded += recorded
			st.watch(fl.path).Offset = end
		})
		nudge(d.recorded)
	}
}
