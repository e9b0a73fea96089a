package record

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/agmem/agmem/capture"
	"github.com/agmem/agmem/internal/lines"
	"github.com/agmem/agmem/journal"
)

// followBatch bounds the lines Follow records in one transaction (one line of any size
// is always taken whole).
const followBatch = 1 << 20

// Follow records the complete lines of a file the daemon follows, as Lines does: in
// reads the file from offset at, and Follow takes about followBatch bytes of lines, at
// least one, and leaves a last line with no newline yet for later. The file's mark moves
// past them in the same transaction, to the mark that mark(end) gives, so that a line
// is recorded exactly once whatever moment the daemon dies at. A bad line, or one
// longer than capture.max_input_bytes, is refused ("offset N: ..."), never in the way
// of the lines after it; while nothing is recorded (capture.enabled, an opt-out), the
// mark moves past lines all the same. end is where the next batch starts: at when there
// was no complete line.
func (r *Recorder) Follow(path string, in io.Reader, at int64, mark func(end int64) journal.WatchMark) (end int64, out Outcome, err error) {
	lr := lines.NewReader(in, r.maxInput, 64<<10, at)
	now := time.Now()
	end = at
	var entries []admitted
	for taken := 0; taken < followBatch; {
		l, err := lr.Next()
		if !l.Ended {
			if err != nil && !errors.Is(err, io.EOF) {
				return at, Outcome{}, err
			}
			break // a line still being written, or none
		}
		end = lr.Offset()
		taken += len(l.Text)
		switch {
		case r.off != "":
		case l.Long:
			out.Refused = append(out.Refused, fmt.Errorf("offset %d: longer than %s", l.At, sizeName(r.maxInput)))
		case len(bytes.TrimSpace(l.Text)) > 0:
			kept, err := r.followed(l.Text, now, &out)
			if err != nil {
				r.refuse(&out, fmt.Errorf("offset %d: %w", l.At, err))
			}
			entries = append(entries, kept...)
		}
	}
	if end == at {
		return at, out, nil
	}
	if r.off != "" {
		out.NotCaptured = []string{r.off}
	}
	err = r.write(entries, journal.AppendOptions{Now: now, Watched: &journal.Watched{Path: path, Mark: mark(end)}}, &out)
	if err != nil {
		return at, out, err
	}
	return end, out, nil
}

// followed decodes and admits one line of a followed file.
func (r *Recorder) followed(line []byte, now time.Time, out *Outcome) ([]admitted, error) {
	d, err := capture.Decode(line, r.policy, now)
	if err != nil {
		return nil, r.redacted(err, line)
	}
	kept, err := r.admit(d, nil, out)
	return kept, r.redacted(err, line)
}
