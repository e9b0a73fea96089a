package recall

import (
	"bytes"
	"fmt"
	"io"

	"github.com/agmem/agmem/render"
	"github.com/agmem/agmem/vcs"
)

// record is one batch's session record on a branch: its parts, in order.
type record struct {
	src   source
	parts []string
	skip  bool // unreadable, from another repo: passed over
}

// recordsIn lists the records in dir on the branch s.
func recordsIn(repo *vcs.Git, s source, dir string) ([]record, error) {
	names, err := repo.ListFiles(s.tip, dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	var out []record
	for _, parts := range render.RecordFiles(names) {
		out = append(out, record{src: s, parts: parts})
	}
	return out, nil
}

// reading reads records from git one after the other, each part inflated by a
// goroutine of its own, the next part's while the one before is read. Inflating is
// most of what reading a record costs, and lines are handled faster than one goroutine
// inflates them: with two at it, reading takes both of two cores. A part is inflated
// at most aheadChunks chunks ahead of its reader, however big it is.
type reading struct {
	repo  *vcs.Git
	parts []partRef      // of every record, in order
	next  int            // the first of parts not started
	open  []*partReading // started and not read through, in order
	free  chan []byte    // chunks read, to be filled again
}

const (
	chunkSize   = 256 << 10
	aheadChunks = 16
	partsOpen   = 2 // the one read and the next
)

type partRef struct {
	src  source
	path string
}

// partReading is a part being inflated into chunks by a goroutine of its own, which
// sets err (if it fails) before it closes chunks, and stops when stop is closed.
type partReading struct {
	chunks chan []byte
	stop   chan struct{}
	err    error
}

func newReading(repo *vcs.Git) *reading {
	// Room for every chunk there can be: none is left to the garbage collector.
	return &reading{repo: repo, free: make(chan []byte, partsOpen*(aheadChunks+2))}
}

// start has records read, in their order, with eachLine: what was being read before
// is dropped.
func (r *reading) start(records []record) {
	r.close()
	r.parts, r.next = nil, 0
	for _, rec := range records {
		for _, path := range rec.parts {
			r.parts = append(r.parts, partRef{rec.src, path})
		}
	}
}

// close stops the goroutines still inflating.
func (r *reading) close() {
	for _, p := range r.open {
		close(p.stop)
	}
	r.open = nil
}

// part is the reading of the next part, started if it was not.
func (r *reading) part() *partReading {
	for len(r.open) < partsOpen && r.next < len(r.parts) {
		p := &partReading{chunks: make(chan []byte, aheadChunks), stop: make(chan struct{})}
		go p.inflate(r.repo, r.parts[r.next], r.free)
		r.open = append(r.open, p)
		r.next++
	}
	return r.open[0]
}

// done drops the part read through (or given up on).
func (r *reading) done() {
	close(r.open[0].stop)
	r.open = r.open[1:]
}

func (p *partReading) inflate(repo *vcs.Git, part partRef, free chan []byte) {
	defer close(p.chunks)
	err := func() error {
		rd, err := repo.OpenFile(part.src.tip, part.path)
		if err != nil {
			return err
		}
		defer rd.Close()
		for {
			var chunk []byte
			select {
			case chunk = <-free:
			default:
				chunk = make([]byte, chunkSize)
			}
			n, err := fill(rd, chunk)
			if n > 0 {
				select {
				case p.chunks <- chunk[:n]:
				case <-p.stop:
					return nil
				}
			}
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
		}
	}()
	if err != nil {
		p.err = fmt.Errorf("%s: %s: %w", part.src.name, part.path, err)
	}
}

// fill reads into chunk until it is full or rd ends. Unlike io.ReadFull it passes on the
// io.ErrUnexpectedEOF an inflater gives for a stream cut short as the error it is: to
// ReadFull it would be the end of the part, and replay would print less and succeed.
func fill(rd io.Reader, chunk []byte) (int, error) {
	n := 0
	for n < len(chunk) {
		m, err := rd.Read(chunk[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// eachLine calls fn with each line that is not blank of rec, the next record, without
// its newline. A line may run on from one chunk or part into the next.
func (r *reading) eachLine(rec record, fn func(line []byte) error) error {
	left := len(rec.parts) // not read through
	defer func() {
		for ; left > 0; left-- {
			r.part()
			r.done()
		}
	}()
	var carry []byte // the start of a line that runs on
	for left > 0 {
		p := r.part()
		chunk, ok := <-p.chunks
		if !ok {
			r.done()
			left--
			if p.err != nil {
				return p.err
			}
			continue
		}
		rest := chunk
		for {
			end := bytes.IndexByte(rest, '\n')
			if end < 0 {
				break
			}
			line := rest[:end]
			if len(carry) > 0 {
				line = append(carry, line...)
				carry = carry[:0]
			}
			if err := passLine(line, fn); err != nil {
				return err
			}
			rest = rest[end+1:]
		}
		carry = append(carry, rest...)
		select {
		case r.free <- chunk[:cap(chunk)]:
		default:
		}
	}
	return passLine(carry, fn)
}

// passLine calls fn with line less the white space around it, if anything is left.
func passLine(line []byte, fn func(line []byte) error) error {
	if line = bytes.TrimSpace(line); len(line) > 0 {
		return fn(line)
	}
	return nil
}
