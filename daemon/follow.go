package daemon

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/agmem/agmem/capture"
	"github.com/agmem/agmem/journal"
	"github.com/agmem/agmem/memory"
)

// batchBytes bounds the lines recorded in one journal transaction (one line of any size
// is always taken whole).
const batchBytes = 1 << 20

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
func (d *Daemon) drain(fl *follower) error {
	for {
		fi, err := fl.f.Stat()
		if err != nil {
			return err
		}
		if fi.Size() <= fl.mark.Offset {
			return nil
		}
		s := d.current()
		lines, end, err := readLines(io.NewSectionReader(fl.f, fl.mark.Offset, fi.Size()-fl.mark.Offset),
			fl.mark.Offset, s.MaxInput)
		if err != nil {
			return fmt.Errorf("read: %w", err)
		}
		if end == fl.mark.Offset {
			return nil // only a line still being written
		}
		entries := d.decode(fl, lines, s)
		mark := journal.WatchMark{Offset: end, File: fingerprint(fl.f, end)}
		appended, err := d.Repo.Journal().AppendWatched(fl.path, mark, entries, s.SessionIdle, time.Now())
		if err != nil {
			return fmt.Errorf("record: %w", err)
		}
		fl.mark = mark
		recorded := 0
		for _, a := range appended {
			if !a.Duplicate {
				recorded++
			}
		}
		d.Log.Info("recorded from a followed file", "path", fl.path, "lines", len(lines),
			"recorded", recorded, "offset", end)
		d.update(func(st *State) {
			st.Counters.Recorded += recorded
			st.watch(fl.path).Offset = end
		})
		nudge(d.recorded)
	}
}

// line is one complete line of a followed file, or one passed over for its size.
type line struct {
	at   int64 // its offset in the file
	text []byte
	long bool // longer than the input limit: text is not kept
}

// readLines reads the complete lines of r, which starts at offset at of its file: about
// batchBytes of them, and at least one. end is the offset past the last; a last line
// with no newline yet is left for later. A line longer than limit is passed over.
func readLines(r io.Reader, at int64, limit int) (lines []line, end int64, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	end = at
	var cur line
	size, taken := 0, 0
	cur.at = end
	for taken < batchBytes {
		chunk, err := br.ReadSlice('\n')
		size += len(chunk)
		if !cur.long {
			if size > limit+1 { // +1: the newline
				cur.long, cur.text = true, nil
			} else {
				cur.text = append(cur.text, chunk...)
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF:
			return lines, end, nil
		case err != nil:
			return nil, at, err
		}
		end += int64(size)
		taken += len(cur.text)
		lines = append(lines, cur)
		cur, size = line{at: end}, 0
	}
	return lines, end, nil
}

// decode turns lines into entries as `agmem record --jsonl` does. A line it cannot read
// is logged and passed over, so that one bad line never stops a file.
func (d *Daemon) decode(fl *follower, lines []line, s Settings) []memory.Entry {
	if !s.Capture {
		return nil
	}
	path := fl.path
	now := time.Now()
	var out []memory.Entry
	for _, l := range lines {
		if l.long {
			d.Log.Warn("line not recorded: longer than capture.max_input_bytes", "path", path, "at", l.at)
			continue
		}
		if len(bytes.TrimSpace(l.text)) == 0 {
			continue
		}
		dec, err := capture.Decode(l.text, s.Policy, now)
		if err != nil {
			d.Log.Warn("line not recorded", "path", path, "at", l.at, "error", err.Error())
			continue
		}
		if !capture.HasMember(l.text, "id") {
			// Known by where it is and what it says: a line read again (after a write
			// that committed but reported an error) is kept once.
			dec.IdentifyBy(fmt.Appendf(nil, "%s\x00%s\x00%d\x00%s", path, fingerprint(fl.f, l.at), l.at, l.text),
				capture.HasMember(l.text, "timestamp"))
		}
		for _, why := range dec.Skipped {
			d.Log.Debug("not captured", "path", path, "at", l.at, "why", why)
		}
		if dir := optedOut(dec.Entries); dir != "" {
			d.Log.Debug("not captured: opted out", "path", path, "at", l.at, "by", dir)
			continue
		}
		out = append(out, dec.Entries...)
	}
	return out
}

// optedOut is the directory whose opt-out file covers the working directory of one of
// entries' observations, or "": record would capture nothing of such input.
func optedOut(entries []memory.Entry) string {
	for _, e := range entries {
		if o := e.Observation; o != nil && o.Cwd != "" {
			if dir := capture.OptedOut(o.Cwd); dir != "" {
				return dir
			}
		}
	}
	return ""
}
