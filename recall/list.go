package recall

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/agmem/agmem/render"
	"github.com/agmem/agmem/vcs"
)

// Summary is what a listing of sessions shows of one found in git: what its entries
// would say, read as Session reads them, from one branch.
type Summary struct {
	Repo         string    // where it was read: Local, or the fetched branch "origin/agents/<repo id>"
	First, Last  time.Time // of its first and last entries in time order
	Observations int
	Events       int
	Source       string // of its first entry in time order that names one

	sourceAt time.Time // of the entry Source is from
}

// Summaries sums up every session found in git, except those for which known returns
// true (the journal's, which it describes better). A session is read from the first
// branch that holds it: this repo's own, then the fetched ones by name (the fetched copy
// of this repo's own branch adds nothing new). On a branch, an entry is counted once,
// whichever of its records holds it first.
//
// It reads each record as a stream and no more of a line than its head, and holds no
// entry: what it holds grows with the number of entries by their ids only, which it
// needs to count each once. A record whose first line is an entry of a session known or
// already found is not read further: a record holds one batch, so one session. A
// fetched branch's record that does not read as entries, which anyone could have
// written, is passed over whole; one of this repo's own is an error.
func Summaries(repo *vcs.Git, known func(session string) bool) (map[string]Summary, error) {
	srcs, err := sources(repo)
	if err != nil {
		return nil, err
	}
	out := map[string]Summary{}
	seen := func(session string) bool {
		_, found := out[session]
		return found || known(session)
	}
	rd := newReading(repo)
	defer rd.close()
	for _, s := range srcs {
		dirs, err := sessionDirs(repo, s)
		if err != nil {
			return nil, err
		}
		var records []record
		for _, d := range dirs {
			rs, err := unseen(repo, s, d, seen)
			if err != nil {
				return nil, err
			}
			records = append(records, rs...)
		}
		branch := newTally()
		rd.start(records)
		for _, rec := range records {
			if err := branch.read(rd, rec); err != nil {
				return nil, err
			}
		}
		for id, sum := range branch.sessions {
			if !seen(id) {
				sum.Repo = s.name
				out[id] = *sum
			}
		}
	}
	return out, nil
}

// sessionDirs are the directories of session records on the branch s, in either
// layout: sessions/<session> (layout 1) holds records, sessions/<bucket> (layout 2)
// holds session directories.
func sessionDirs(repo *vcs.Git, s source) ([]string, error) {
	top, err := repo.ListDir(s.tip, render.SessionsDir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	var dirs []string
	for _, d := range top {
		d = render.SessionsDir + "/" + d
		dirs = append(dirs, d)
		inside, err := repo.ListDir(s.tip, d)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		for _, sub := range inside {
			dirs = append(dirs, d+"/"+sub)
		}
	}
	return dirs, nil
}

// tally is what has been counted of the records read on a branch.
type tally struct {
	ids      map[string]bool // of the entries counted
	sessions map[string]*Summary
}

func newTally() *tally {
	return &tally{ids: map[string]bool{}, sessions: map[string]*Summary{}}
}

// unseen is the records in dir on the branch s but those whose first line is an entry
// of a session seen returns true for: a record holds one batch, so one session, and
// what the journal knows or a branch read before holds need not be read further. It
// reads the first line of each file, listing them as it goes: looking a directory up
// in git takes longer than that.
func unseen(repo *vcs.Git, s source, dir string, seen func(session string) bool) ([]record, error) {
	var names []string
	skip := map[string]bool{}
	err := repo.EachFile(s.tip, dir, func(path string, rd io.Reader) error {
		names = append(names, path)
		line, err := bufio.NewReader(rd).ReadBytes('\n')
		if err != nil && err != io.EOF {
			return fmt.Errorf("%s: %s: %w", s.name, path, err)
		}
		if h, err := readHead(bytes.TrimSpace(line), s.name != Local); err == nil && seen(h.session) {
			skip[path] = true
		}
		return nil
	})
	var out []record
	for _, parts := range render.RecordFiles(names) {
		if !skip[parts[0]] {
			out = append(out, record{src: s, parts: parts})
		}
	}
	return out, err
}

// read counts the entries of rec, the next record of rd. A fetched record is counted
// apart and added once it has been read through, so that a broken one adds nothing.
func (t *tally) read(rd *reading, rec record) error {
	fetched := rec.src.name != Local
	into := t
	if fetched {
		into = newTally()
	}
	broken := false
	err := rd.eachLine(rec, func(line []byte) error {
		h, err := readHead(line, fetched)
		if err != nil {
			broken = true
			return err
		}
		if !fetched || filedAsItsSession(rec.parts[0], h.filed) {
			into.count(h, line, t)
		}
		return nil
	})
	switch {
	case err != nil && broken && fetched:
		// Another repo's broken or hostile record hides what it holds, not every
		// session of every agent.
		return nil
	case err != nil:
		return fmt.Errorf("%s: %s: %w", rec.src.name, rec.parts[0], err)
	}
	if into != t {
		t.add(into)
	}
	return nil
}

// count counts line, an entry with head h, unless t or before (what was counted before
// the record being read) has counted its id.
func (t *tally) count(h lineHead, line []byte, before *tally) {
	if t.ids[h.id] || before.ids[h.id] {
		return
	}
	t.ids[h.id] = true
	s := t.sessions[h.session]
	if s == nil {
		s = &Summary{First: h.at, Last: h.at}
		t.sessions[h.session] = s
	}
	// Of entries at the same time, the first read is first and the last read last, as
	// in Session's order.
	if h.at.Before(s.First) {
		s.First = h.at
	}
	if !h.at.Before(s.Last) {
		s.Last = h.at
	}
	if h.event {
		s.Events++
	} else {
		s.Observations++
	}
	// Most entries name their source, and most records are in time order: a line is
	// decoded for its source only if it could come before the entry that named one.
	if namesFirst(s, h.at) && namesFirst(before.sessions[h.session], h.at) {
		if source := sourceOf(line); source != "" {
			s.Source, s.sourceAt = source, h.at
		}
	}
}

// namesFirst says whether an entry at a time read after those s sums up would come
// before every one of them that names a source.
func namesFirst(s *Summary, at time.Time) bool {
	return s == nil || s.Source == "" || at.Before(s.sourceAt)
}

// add adds what was counted in a record read after those t has counted.
func (t *tally) add(rec *tally) {
	for id := range rec.ids {
		t.ids[id] = true
	}
	for session, r := range rec.sessions {
		s := t.sessions[session]
		if s == nil {
			t.sessions[session] = r
			continue
		}
		if r.First.Before(s.First) {
			s.First = r.First
		}
		if !r.Last.Before(s.Last) {
			s.Last = r.Last
		}
		s.Observations += r.Observations
		s.Events += r.Events
		if r.Source != "" && namesFirst(s, r.sourceAt) {
			s.Source, s.sourceAt = r.Source, r.sourceAt
		}
	}
}

// sourceOf is the source that line, an entry readHead has read, names, as
// memory.Entry.Source gives it.
func sourceOf(line []byte) string {
	var e struct {
		Observation *struct {
			Source string `json:"source"`
		} `json:"observation"`
		Event *struct {
			Source string `json:"source"`
		} `json:"event"`
	}
	json.Unmarshal(line, &e) // a member of another type leaves the others decoded
	switch {
	case e.Observation != nil:
		return e.Observation.Source
	case e.Event != nil:
		return e.Event.Source
	}
	return ""
}
