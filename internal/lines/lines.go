// Package lines is the one line reader of everything agmem records: record --jsonl,
// the files the daemon follows, and imports. Each line is bounded: of a line longer
// than the bound it keeps nothing, says so, and reads on past it, so that one huge line
// never fills memory and never stops the lines after it.
package lines

import (
	"bufio"
	"io"
)

// Line is one line of input.
type Line struct {
	N    int    // its number, from 1
	At   int64  // the offset of its first byte
	Text []byte // with its newline, if it has one; nil for a long line
	// Long says the line is longer than the bound: Text is not kept.
	Long bool
	// Ended says the line ends with a newline: the last line of input may not, and
	// in a file still being written it may be only the start of a line.
	Ended bool
}

// Reader reads lines of at most limit bytes each, not counting the newline.
type Reader struct {
	br    *bufio.Reader
	limit int
	n     int
	at    int64
}

// NewReader reads r, which starts at offset at, through a buffer of size bytes.
func NewReader(r io.Reader, limit, size int, at int64) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, size), limit: limit, at: at}
}

// Next returns the next line, and io.EOF with the last one or after it: a last line
// without a newline comes with io.EOF; at the very end, an empty Line (N 0) does.
func (r *Reader) Next() (Line, error) {
	l := Line{At: r.at}
	size := 0
	for {
		chunk, err := r.br.ReadSlice('\n')
		size += len(chunk)
		ended := err == nil
		if !l.Long {
			// The bound is on the line without its newline.
			if size-boolInt(ended) > r.limit {
				l.Long, l.Text = true, nil
			} else {
				l.Text = append(l.Text, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		r.at += int64(size)
		if size > 0 {
			r.n++
			l.N, l.Ended = r.n, ended
		}
		return l, err
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Offset is where the next line starts.
func (r *Reader) Offset() int64 { return r.at }
