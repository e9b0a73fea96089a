package record

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/agmem/agmem/capture"
	"github.com/agmem/agmem/internal/lines"
	"github.com/agmem/agmem/journal"
)

// This file is record --jsonl: one object per line, any number of lines, in one
// transaction. Lines are read a chunk at a time, each chunk decoded and admitted by one
// of a worker per core, and collected in their order; once their encoded entries fill
// a part, a journal.Staging records the part where no reader sees it, and all parts
// become visible together at the end: memory follows the part, not the input.

// stagePart is how many bytes of encoded entries --jsonl holds before it stores them in
// the journal, in a part that no reader sees before the staging commits.
const stagePart = 8 << 20

// A worker decodes a chunk of decodeChunk lines at once, or fewer that hold
// decodeChunkBytes: the chunks in flight, two per worker, hold a bounded part of the
// input whatever its lines' length.
const (
	decodeChunk      = 256
	decodeChunkBytes = 1 << 20
)

// Lines records one object per line of in, all in one transaction: every good line is
// recorded, and every bad one refused with its line number. A line longer than
// capture.max_input_bytes is read past, not kept.
func (r *Recorder) Lines(in io.Reader) (Outcome, error) {
	var out Outcome
	if r.off != "" {
		out.NotCaptured = []string{r.off}
		return out, nil
	}
	now := time.Now()
	b := bulk{r: r, now: now}
	defer b.close() // drops what was staged, unless committed
	err := b.read(in, &out)
	switch {
	case err == nil && b.staging == nil:
		return out, r.write(b.entries, journal.AppendOptions{Now: now}, &out)
	case err == nil:
		err = b.commit(&out)
	}
	if err != nil && b.staging != nil {
		out.Recorded = nil // what was staged is dropped
	}
	return out, err
}

// bulk is what --jsonl input holds so far: the entries read and readied for the
// journal since the last part was staged.
type bulk struct {
	r        *Recorder
	now      time.Time
	entries  []admitted
	unstaged int              // bytes of encoded entries in entries
	staging  *journal.Staging // nil until a part is staged
	limit    int64            // the memory limit before the staging's
}

// stagingMemory is the soft bound on the Go heap while a large --jsonl is recorded
// (runtime/debug.SetMemoryLimit): what it holds at once is a part and the outcome of
// each line; left to itself, the collector let the heap grow to twice that (1,000,000
// lines: 316 MB of RSS, 217 MB with this bound).
const stagingMemory = 128 << 20

// stage records the entries read since the last part as a part of a staging, started
// if need be, and notes in out what became of each.
func (b *bulk) stage(out *Outcome) error {
	ps, err := b.r.prepared(b.entries)
	if err != nil {
		return err
	}
	if b.staging == nil {
		if b.staging, err = b.r.journal.StartStaging(b.now, b.r.idle); err != nil {
			return fmt.Errorf("record: %w", err)
		}
		if b.limit = debug.SetMemoryLimit(-1); b.limit > stagingMemory {
			debug.SetMemoryLimit(stagingMemory)
		}
	}
	appended, err := b.staging.Stage(ps)
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	note(out, b.entries, appended)
	clear(b.entries) // let go of their encoded entries
	b.entries, b.unstaged = b.entries[:0], 0
	return nil
}

// commit stages the last part and makes every part visible, and notes in out what
// became of the entries found recorded elsewhere meanwhile.
func (b *bulk) commit(out *Outcome) error {
	if err := b.stage(out); err != nil {
		return err
	}
	changed, err := b.staging.Commit()
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	for i, rec := range out.Recorded {
		if now, ok := changed[rec.ID]; ok && !rec.Duplicate {
			out.Recorded[i].ID, out.Recorded[i].Duplicate = now.ID, now.Duplicate
		}
	}
	return nil
}

// close ends the staging, if one was started: what it did not commit is dropped, and
// what it did is merged into the journal's indexes, which reads the part whole, once
// the memory decoding took is given back.
func (b *bulk) close() {
	if b.staging != nil {
		debug.FreeOSMemory()
		b.staging.Close()
		debug.SetMemoryLimit(b.limit)
	}
}

// decodeJob is a chunk of lines, and where the worker that decodes them puts the results.
type decodeJob struct {
	lines []lines.Line
	done  chan []lineResult
}

type lineResult struct {
	entries     []admitted
	notCaptured []string
	err         error
}

// read reads, decodes and admits every line of in, and stages the entries a part at a
// time.
func (b *bulk) read(in io.Reader, out *Outcome) error {
	workers := runtime.GOMAXPROCS(0)
	jobs := make(chan decodeJob)
	inOrder := make(chan decodeJob, 2*workers) // bounds the chunks read and not collected
	quit := make(chan struct{})
	defer close(quit)
	for range workers {
		go func() {
			for job := range jobs {
				results := make([]lineResult, len(job.lines))
				for i, l := range job.lines {
					if l.Long {
						results[i] = lineResult{err: fmt.Errorf("longer than %s", sizeName(b.r.maxInput))}
						continue
					}
					results[i] = safely(func() lineResult { return b.decodeLine(l.Text) })
					job.lines[i].Text = nil // only its number is needed from now on
				}
				job.done <- results
			}
		}()
	}
	readErr := make(chan error, 1)
	go func() {
		defer close(inOrder)
		defer close(jobs)
		lr := lines.NewReader(in, b.r.maxInput, 1<<20, 0)
		var chunk []lines.Line
		size := 0
		for {
			l, err := lr.Next()
			if l.Long || len(bytes.TrimSpace(l.Text)) > 0 {
				chunk = append(chunk, l)
				size += len(l.Text)
			}
			if len(chunk) == decodeChunk || size >= decodeChunkBytes || err != nil && len(chunk) > 0 {
				job := decodeJob{chunk, make(chan []lineResult, 1)}
				select {
				case inOrder <- job:
				case <-quit:
					return
				}
				jobs <- job
				chunk, size = nil, 0
			}
			if err != nil {
				if !errors.Is(err, io.EOF) {
					readErr <- fmt.Errorf("read stdin: %w", err)
				}
				return
			}
		}
	}()

	for job := range inOrder {
		for i, res := range <-job.done {
			if res.err != nil {
				b.r.refuse(out, fmt.Errorf("line %d: %w", job.lines[i].N, res.err))
				continue
			}
			out.NotCaptured = append(out.NotCaptured, res.notCaptured...)
			b.entries = append(b.entries, res.entries...)
			for _, e := range res.entries {
				b.unstaged += e.p.Size()
			}
		}
		if b.unstaged >= stagePart {
			if err := b.stage(out); err != nil {
				return err
			}
		}
	}
	select {
	case err := <-readErr:
		return err
	default:
		return nil
	}
}

// decodeLine decodes and admits one line: a line whose entries cannot all be admitted
// is a bad line, recorded not at all.
func (b *bulk) decodeLine(line []byte) lineResult {
	d, err := capture.Decode(line, b.r.policy, b.now)
	if err != nil {
		return lineResult{err: b.r.redacted(err, line)}
	}
	var out Outcome
	entries, err := b.r.admit(d, nil, &out)
	return lineResult{entries: entries, notCaptured: out.NotCaptured, err: b.r.redacted(err, line)}
}

// safely runs decode, in a worker goroutine: a panic there would pass Main's recover by
// and exit 2, which agents read as "block". It makes the line a bad one instead,
// reported with the others.
func safely(decode func() lineResult) (res lineResult) {
	defer func() {
		if v := recover(); v != nil {
			res = lineResult{err: fmt.Errorf("internal error: %v", v)}
		}
	}()
	return decode()
}
