package mcp

import (
	"bufio"
	"io"
	"sync/atomic"
	"time"
)

// side is which peer a line came from.
type side int

const (
	fromClient side = iota
	fromServer
)

// line is a message as the relay saw it, for the tracker. A line with eof set marks the
// end of its side's input.
type line struct {
	from side
	data []byte
	at   time.Time
	eof  bool
}

// readChunk is how much of a line the relay reads before passing it on: a longer line
// goes on in pieces, so a message of any size costs this much memory to relay.
const readChunk = 64 << 10

// relay passes the lines read from src on to dst unchanged, and each line, once whole,
// to the tracker's queue. It is the only path a message takes between the peers.
type relay struct {
	from    side
	src     io.Reader
	dst     io.Writer
	lines   *queue[line]
	budget  *atomic.Int64 // bytes the tracker may still be given: its queue's bound
	limit   int           // a longer line is passed on but not given to the tracker
	skipped func()        // called when a line is not given to the tracker
}

// run relays until src ends, then queues the end of this side. A peer that cannot be
// written to any more (it exited, it closed its input) is not written to again, but
// its side is still read to the end, so that its calls are still seen.
func (r *relay) run() {
	br := bufio.NewReaderSize(r.src, readChunk)
	var msg []byte
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		whole := err != bufio.ErrBufferFull
		if !tooLong {
			if len(msg)+len(chunk) > r.limit {
				tooLong, msg = true, nil
			} else {
				msg = append(msg, chunk...)
			}
		}
		if whole {
			// Queued before its last piece is written, not after: once a peer has read a
			// line it may answer it, and the tracker must see a request before its answer.
			r.queue(msg, tooLong)
			msg, tooLong = nil, false
		}
		if len(chunk) > 0 && r.dst != nil {
			if _, werr := r.dst.Write(chunk); werr != nil {
				r.dst = nil
			}
		}
		if err != nil && err != bufio.ErrBufferFull {
			r.lines.put(line{from: r.from, at: time.Now(), eof: true})
			return
		}
	}
}

// queue gives a whole line to the tracker, unless it is empty, longer than the
// limit, or the tracker has more waiting than its budget.
func (r *relay) queue(msg []byte, tooLong bool) {
	switch {
	case tooLong:
		r.skipped()
		return
	case len(msg) == 0:
		return
	case r.budget.Add(-int64(len(msg))) < 0:
		r.budget.Add(int64(len(msg)))
		r.skipped()
		return
	}
	r.lines.put(line{from: r.from, data: msg, at: time.Now()})
}
