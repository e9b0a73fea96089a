package recall

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/journal"
	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/render"
	"github.com/agmem/agmem/vcs"
)

// SessionRow is one session as agmem sessions lists it.
type SessionRow struct {
	ID           string    `json:"session_id"`
	First        time.Time `json:"first"`
	Last         time.Time `json:"last"`
	Observations int       `json:"observations"`
	Events       int       `json:"events"`
	Pending      int       `json:"pending"`
	Source       string    `json:"source,omitempty"`
	From         string    `json:"from"` // "journal", or "git" for a session only the history holds
	Repo         string    `json:"repo"` // Local, or the fetched branch of the repo it came from: "origin/agents/<id>"
}

// journalSessions are the rows of the sessions the journal knows, and their ids.
func journalSessions(repo memrepo.Repo) ([]SessionRow, map[string]bool, error) {
	infos, err := repo.Journal().Sessions()
	if err != nil {
		return nil, nil, err
	}
	var rows []SessionRow
	known := map[string]bool{}
	for _, s := range infos {
		known[s.ID] = true
		rows = append(rows, SessionRow{ID: s.ID, First: s.First, Last: s.Last, Observations: s.Observations,
			Events: s.Events, Pending: s.Pending + s.PendingEvents, Source: s.Source, From: "journal", Repo: Local})
	}
	return rows, known, nil
}

// ListSessions joins what the journal knows of sessions with what only git holds,
// oldest last activity first.
func ListSessions(repo memrepo.Repo) ([]SessionRow, error) {
	rows, known, err := journalSessions(repo)
	if err != nil {
		return nil, err
	}
	git, err := vcs.Open(repo.Root)
	if err != nil {
		return nil, err
	}
	fromGit, err := Summaries(git, func(id string) bool { return known[id] })
	if err != nil {
		return nil, fmt.Errorf("read sessions from git: %w", err)
	}
	for id, s := range fromGit {
		rows = append(rows, SessionRow{ID: id, First: s.First, Last: s.Last, Observations: s.Observations,
			Events: s.Events, Source: s.Source, From: "git", Repo: s.Repo})
	}
	sort.SliceStable(rows, func(a, b int) bool { return rows[a].Last.Before(rows[b].Last) })
	return rows, nil
}

// RecentSessions are the limit sessions active most recently (0: all of them), oldest
// first, as ListSessions has them, and how many sessions there are in all. Those the
// journal no longer knows come from the search index, which knows every session git
// holds without reading their records: on a year's repo, listing them all from git
// reads every record (8 s against 0.4). The index is brought up to date first, for as
// long as ctx allows; lag is what Memory.Lag says when it was not ("" when it was).
func RecentSessions(ctx context.Context, repo memrepo.Repo, limit int) (rows []SessionRow, total int, lag string, err error) {
	rows, known, err := journalSessions(repo)
	if err != nil {
		return nil, 0, "", err
	}
	m, err := Open(ctx, repo)
	if err != nil {
		return nil, 0, "", err
	}
	defer m.Close()
	lag, _ = m.Lag()
	db := m.Index.db
	total = len(rows)
	ids, err := db.Query(`SELECT id FROM sessions`)
	if err != nil {
		return nil, 0, "", err
	}
	for ids.Next() {
		var id string
		if err := ids.Scan(&id); err != nil {
			ids.Close()
			return nil, 0, "", err
		}
		if !known[id] {
			total++
		}
	}
	ids.Close()
	// Enough of the latest that, the journal's left out, limit remain (SQLite: a
	// negative LIMIT is none).
	bound := -1
	if limit > 0 {
		bound = limit + len(known)
	}
	latest, err := db.Query(`SELECT id, source, first, last, observations, origin FROM sessions
		ORDER BY last DESC, id LIMIT ?`, bound)
	if err != nil {
		return nil, 0, "", err
	}
	for latest.Next() {
		var r SessionRow
		var first, last int64
		if err := latest.Scan(&r.ID, &r.Source, &first, &last, &r.Observations, &r.Repo); err != nil {
			latest.Close()
			return nil, 0, "", err
		}
		if !known[r.ID] {
			r.First, r.Last, r.From = time.Unix(0, first).UTC(), time.Unix(0, last).UTC(), "git"
			rows = append(rows, r)
		}
	}
	latest.Close()
	sort.SliceStable(rows, func(a, b int) bool { return rows[a].Last.Before(rows[b].Last) })
	if limit > 0 {
		rows = rows[max(0, len(rows)-limit):]
	}
	for i := range rows {
		if r := &rows[i]; r.From == "git" {
			if err := db.QueryRow(`SELECT count(*) FROM entries e WHERE `+inSession+` AND e.event <> ''`, r.ID).Scan(&r.Events); err != nil {
				return nil, 0, "", err
			}
		}
	}
	return rows, total, lag, nil
}

// Where is where a session's entries are.
type Where int

const (
	InJournal Where = iota // the journal holds all of them
	InGit                  // the journal knows none: a fresh clone, another repo's session
	// InBoth: gc dropped the session from the journal and it went on after, or it went
	// on in another memory repo too (a fetched branch holds some of it)
	InBoth
)

// Locate says where a session's entries are.
func Locate(repo memrepo.Repo, session string) (Where, error) {
	j := repo.Journal()
	_, known, err := j.Session(session)
	if err != nil || !known {
		return InGit, err
	}
	if forgotten, err := j.WasForgotten(session); err != nil || forgotten {
		return InBoth, err
	}
	if elsewhere, err := continuedElsewhere(repo, j, session); err != nil || elsewhere {
		return InBoth, err
	}
	return InJournal, nil
}

// continuedElsewhere says whether a fetched branch holds a record of session that the
// journal j did not commit: the session went on in another memory repo. This repo's own
// branch, pushed and fetched back, holds none such; a fetched branch whose tree cannot
// be read (anyone may push one) tells nothing.
func continuedElsewhere(repo memrepo.Repo, j *journal.Journal, session string) (bool, error) {
	git, err := vcs.Open(repo.Root)
	if err != nil {
		return false, err
	}
	fetched, err := git.FetchedAgents("")
	if err != nil || len(fetched) == 0 {
		return false, err
	}
	ledger, err := j.Ledger()
	if err != nil {
		return false, err
	}
	own := map[string]bool{}
	for _, c := range ledger {
		if c.Session == session {
			for _, l := range render.Layouts {
				own[l.SessionRecordPath(session, c.Batch)] = true
			}
		}
	}
	for _, f := range fetched {
		s := source{f.Name(), f.Tip}
		dirs, err := sessionDirsOf(git, s, session)
		if err != nil {
			continue
		}
		for _, d := range dirs {
			records, err := recordsIn(git, s, d)
			if err != nil {
				break
			}
			for _, r := range records {
				if !own[r.parts[0]] {
					return true, nil
				}
			}
		}
	}
	return false, nil
}

// ErrNoSession is EachEntry's error for a session neither the journal nor git holds.
var ErrNoSession = errors.New("no such session in the journal or the git history")

// EachEntry walks a session's entries in order, from where they are; from both places
// joined when they are in both.
func EachEntry(repo memrepo.Repo, from Where, session string, fn func(memory.Entry) error) error {
	j := repo.Journal()
	if from == InJournal {
		return j.Timeline(session, fn)
	}
	git, err := vcs.Open(repo.Root)
	if err != nil {
		return err
	}
	entries, err := Session(git, session)
	if err != nil {
		return fmt.Errorf("read session %s from git: %w", session, err)
	}
	if from == InBoth {
		if entries, err = joinJournal(j, session, entries); err != nil {
			return err
		}
	}
	if len(entries) == 0 {
		return ErrNoSession
	}
	for _, en := range entries {
		if err := fn(en); err != nil {
			return err
		}
	}
	return nil
}

// joinJournal adds to what git holds of a session what the journal holds, each entry
// once, in time order (git's first for the same time).
func joinJournal(j *journal.Journal, session string, fromGit []memory.Entry) ([]memory.Entry, error) {
	seen := map[string]bool{}
	for _, en := range fromGit {
		seen[en.ID()] = true
	}
	all := fromGit
	err := j.Timeline(session, func(en memory.Entry) error {
		if !seen[en.ID()] {
			all = append(all, en)
		}
		return nil
	})
	sort.SliceStable(all, func(a, b int) bool { return all[a].Time().Before(all[b].Time()) })
	return all, err
}
