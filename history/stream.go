package history

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/render"
	"github.com/agmem/agmem/vcs"
)

// SessionJSON calls fn with each entry of session id that git holds, as the JSON of a
// memory.Entry in the form the journal stores it (json.Marshal's), in Session's order,
// and returns how many there were. raw is fn's until it returns.
//
// It holds no record whole: a first pass reads each line's id, time and session (the
// rest of a line of this repo's own branch is only scanned), to drop repeats and
// invalid lines and to learn the order; a second reads the records again and passes the
// kept lines on. A fetched branch's lines, which anyone could have written, are decoded
// whole and checked in the first pass, and encoded again in the second. Lines found out
// of time order (a session flushed from two clones, say) are held until every line is
// read, then sorted.
func SessionJSON(repo *vcs.Repo, id string, fn func(raw []byte) error) (int, error) {
	srcs, err := sources(repo)
	if err != nil {
		return 0, err
	}
	dir := render.SessionDir(id)
	var records []record
	for _, s := range srcs {
		rs, err := recordsIn(repo, s, dir)
		if err != nil {
			return 0, err
		}
		records = append(records, rs...)
	}

	// First pass: which lines to keep (numbered in reading order), and when each is.
	var keep []bool
	var times []time.Time // of the kept lines, in reading order
	inOrder := true
	seen := map[string]bool{}
	note := func(h lineHead) {
		kept := h.session == id && !seen[h.id]
		seen[h.id] = true
		keep = append(keep, kept)
		if !kept {
			return
		}
		if n := len(times); n > 0 && h.at.Before(times[n-1]) {
			inOrder = false
		}
		times = append(times, h.at)
	}
	for i := range records {
		rec := &records[i]
		fetched := rec.src.name != Local
		var heads []lineHead // a fetched record's, noted once all of it has been read
		err := rec.eachLine(repo, func(line []byte) error {
			h, err := readHead(line, fetched)
			if err != nil {
				return err
			}
			if fetched {
				heads = append(heads, h)
			} else {
				note(h)
			}
			return nil
		})
		if err != nil && fetched {
			// Another repo's broken or hostile record hides what it holds, not the
			// session.
			rec.skip = true
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("%s: %s: %w", rec.src.name, rec.parts[0], err)
		}
		for _, h := range heads {
			note(h)
		}
	}

	// Second pass: the kept lines, passed on as they come, or held and sorted.
	var held [][]byte
	line, kept := 0, 0
	var escaped bytes.Buffer
	for _, rec := range records {
		if rec.skip {
			continue
		}
		err := rec.eachLine(repo, func(raw []byte) error {
			line++
			if !keep[line-1] {
				return nil
			}
			kept++
			escaped.Reset()
			if rec.src.name != Local {
				var e memory.Entry
				if err := json.Unmarshal(raw, &e); err != nil {
					return err
				}
				raw, _ = json.Marshal(e) // it was decoded from JSON: it encodes
				escaped.Write(raw)
			} else {
				// Records are written without HTML escaping; the journal's JSON has it.
				json.HTMLEscape(&escaped, raw)
			}
			if !inOrder {
				held = append(held, bytes.Clone(escaped.Bytes()))
				return nil
			}
			return fn(escaped.Bytes())
		})
		if err != nil {
			return kept, err
		}
	}
	if !inOrder {
		order := make([]int, len(held))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool { return times[order[a]].Before(times[order[b]]) })
		for _, i := range order {
			if err := fn(held[i]); err != nil {
				return kept, err
			}
		}
	}
	return kept, nil
}

// record is one batch's session record on a branch: its parts, in order.
type record struct {
	src   source
	parts []string
	skip  bool // unreadable, from another repo: passed over
}

// recordsIn lists the records in dir on the branch s.
func recordsIn(repo *vcs.Repo, s source, dir string) ([]record, error) {
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

// eachLine calls fn with each line of the record that is not blank, without its
// newline. A line may run on from one part into the next.
func (rec record) eachLine(repo *vcs.Repo, fn func(line []byte) error) error {
	rd := rec.open(repo)
	defer rd.Close()
	buf := make([]byte, 0, 1<<20)
	for {
		n, err := rd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		eof := err == io.EOF
		if err != nil && !eof {
			return err
		}
		rest := buf
		for {
			end := bytes.IndexByte(rest, '\n')
			if end < 0 {
				break
			}
			if line := bytes.TrimSpace(rest[:end]); len(line) > 0 {
				if err := fn(line); err != nil {
					return err
				}
			}
			rest = rest[end+1:]
		}
		if eof {
			if line := bytes.TrimSpace(rest); len(line) > 0 {
				return fn(line)
			}
			return nil
		}
		// What is left starts a line: it moves to the front, into more room if it fills
		// the buffer.
		if len(rest) == cap(buf) {
			buf = append(buf[:0:0], make([]byte, 2*cap(buf))...)[:0]
		}
		buf = append(buf[:0], rest...)
	}
}

// open reads the record's parts joined, each inflated in a goroutine of its own while
// the lines read before are handled: on a second core, reading a record from git costs
// the longer of the two, not both.
func (rec record) open(repo *vcs.Repo) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		buf := make([]byte, 256<<10)
		for _, part := range rec.parts {
			err := copyFile(pw, repo, rec.src.tip, part, buf)
			if err != nil {
				pw.CloseWithError(fmt.Errorf("%s: %s: %w", rec.src.name, part, err))
				return
			}
		}
		pw.Close()
	}()
	return pr
}

// copyFile writes the file at path in commit tip to w, a buffer at a time.
func copyFile(w io.Writer, repo *vcs.Repo, tip plumbing.Hash, path string, buf []byte) error {
	rd, err := repo.OpenFile(tip, path)
	if err != nil {
		return err
	}
	defer rd.Close()
	for {
		n, err := io.ReadFull(rd, buf)
		if n > 0 {
			if _, err := w.Write(buf[:n]); err != nil {
				return err
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
