package recall

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/vcs"
)

// SessionJSON calls fn with each entry of session id that git holds, as the JSON of a
// memory.Entry in the form the journal gives it (json.Marshal's), in Session's order,
// and returns how many there were. raw is fn's until it returns.
//
// It holds no record whole: a first pass reads each line's id, time and session (the
// rest of a line of this repo's own branch is only scanned), to drop repeats and
// invalid lines and to learn the order; a second reads the records again and passes the
// kept lines on. A fetched branch's lines, which anyone could have written, are decoded
// whole and checked in the first pass, and encoded again in the second. Lines found out
// of time order (a session flushed from two clones, say) are held until every line is
// read, then sorted.
func SessionJSON(repo *vcs.Git, id string, fn func(raw []byte) error) (int, error) {
	srcs, err := sources(repo)
	if err != nil {
		return 0, err
	}
	var records []record
	for _, s := range srcs {
		dirs, err := sessionDirsOf(repo, s, id)
		if err != nil {
			return 0, err
		}
		var rs []record
		for _, d := range dirs {
			in, err := recordsIn(repo, s, d)
			if err != nil {
				return 0, err
			}
			rs = append(rs, in...)
		}
		// A session flushed before and after an upgrade has records in both layouts'
		// directories: by batch, they are in time order.
		slices.SortStableFunc(rs, func(a, b record) int { return strings.Compare(path.Base(a.parts[0]), path.Base(b.parts[0])) })
		records = append(records, rs...)
	}

	// First pass: which lines to keep (numbered in reading order), and when each is.
	var keep []bool
	var times []time.Time // of the kept lines, in reading order
	inOrder := true
	seen := map[string]bool{}
	rd := newReading(repo)
	defer rd.close()
	rd.start(records)
	note := func(h lineHead, filed bool) {
		kept := filed && h.session == id && !seen[h.id]
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
		err := rd.eachLine(*rec, func(line []byte) error {
			h, err := readHead(line, fetched)
			if err != nil {
				return err
			}
			if fetched {
				heads = append(heads, h)
			} else {
				note(h, true)
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
			// A record filed elsewhere (anyone may push one) does not speak for the session.
			note(h, filedAsItsSession(rec.parts[0], h.filed))
		}
	}

	// Second pass: the kept lines, passed on as they come, or held and sorted.
	var held [][]byte
	line, kept := 0, 0
	var escaped bytes.Buffer
	var readable []record
	for _, rec := range records {
		if !rec.skip {
			readable = append(readable, rec)
		}
	}
	rd.start(readable)
	for _, rec := range readable {
		err := rd.eachLine(rec, func(raw []byte) error {
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
				raw, _ = json.Marshal(fromFetched(e)) // it was decoded from JSON: it encodes
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
