// Package history reads sessions back from what git holds: the sessions/ records that
// every flush commits, on this memory repo's own branch and on the branches of the other
// memory repos that agmem pull fetched (refs/remotes/<remote>/agents/<repo id>). It is
// how replay and sessions work in a fresh clone, where there is no journal, for what
// the journal no longer holds (agmem gc), and for the sessions of other agents.
//
// A batch's record may be split into parts (render.SessionRecordParts); history reads a
// record as its parts joined in order.
package history

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/render"
	"github.com/agmem/agmem/vcs"
)

// Local names this memory repo's own branch as the place a session was read from.
const Local = "local"

// source is a branch that history reads sessions from.
type source struct {
	name string // Local, or a fetched branch: "origin/agents/<repo id>"
	tip  plumbing.Hash
}

// sources are this repo's branch, then the fetched branches of other memory repos.
func sources(repo *vcs.Repo) ([]source, error) {
	_, tip, err := repo.Head()
	if err != nil {
		return nil, err
	}
	out := []source{{Local, tip}}
	fetched, err := repo.FetchedAgents("")
	if err != nil {
		return nil, err
	}
	for _, f := range fetched {
		out = append(out, source{f.Name(), f.Tip})
	}
	return out, nil
}

// Session is the entries of one session found in git, in time order, each entry once,
// gathered from this repo's branch and every fetched one.
func Session(repo *vcs.Repo, id string) ([]memory.Entry, error) {
	var out []memory.Entry
	_, err := SessionJSON(repo, id, func(raw []byte) error {
		var e memory.Entry
		if err := json.Unmarshal(raw, &e); err != nil {
			return fmt.Errorf("session %s: %w", id, err)
		}
		out = append(out, e)
		return nil
	})
	return out, err
}

// Found is a session found in git.
type Found struct {
	Repo    string // where it was read: Local, or the fetched branch "origin/agents/<repo id>"
	Entries []memory.Entry
}

// Sessions is every session found in git, with its entries in time order, except those
// for which known returns true (the journal's, which it describes better). A session is
// read from the first branch that holds it: this repo's own, then the fetched ones by
// name (the fetched copy of this repo's own branch adds nothing new).
func Sessions(repo *vcs.Repo, known func(session string) bool) (map[string]Found, error) {
	srcs, err := sources(repo)
	if err != nil {
		return nil, err
	}
	out := map[string]Found{}
	seen := func(id string) bool {
		_, found := out[id]
		return found || known(id)
	}
	for _, s := range srcs {
		dirs, err := repo.ListDir(s.tip, render.SessionsDir)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		var entries []memory.Entry
		for _, d := range dirs {
			es, err := readDir(repo, s, render.SessionsDir+"/"+d, seen)
			if err != nil {
				return nil, err
			}
			entries = append(entries, es...)
		}
		for id, es := range bySession(entries) {
			if !seen(id) {
				out[id] = Found{Repo: s.name, Entries: es}
			}
		}
	}
	return out, nil
}

// readDir reads the records in dir on the branch s. A record whose first line is an
// entry of a session skip returns true for is not read further: a record holds one
// batch, so one session.
func readDir(repo *vcs.Repo, s source, dir string, skip func(session string) bool) ([]memory.Entry, error) {
	var names []string
	data := map[string][]byte{}
	err := repo.EachFile(s.tip, dir, func(path string, rd io.Reader) error {
		names = append(names, path)
		var err error
		data[path], err = bufio.NewReader(rd).ReadBytes('\n')
		if err != nil && err != io.EOF {
			return fmt.Errorf("%s: %s: %w", s.name, path, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Only first lines were read: read the records wanted whole.
	records := render.RecordFiles(names)
	wanted := map[string]bool{}
	kept := records[:0]
	for _, rec := range records {
		if head, err := render.ParseSessionRecord(data[rec[0]]); err == nil && len(head) == 1 && skip(head[0].Session()) {
			continue
		}
		kept = append(kept, rec)
		for _, name := range rec {
			wanted[name] = true
		}
	}
	records = kept
	if len(wanted) > 0 {
		err := repo.EachFile(s.tip, dir, func(path string, rd io.Reader) error {
			if !wanted[path] {
				return nil
			}
			var err error
			if data[path], err = io.ReadAll(rd); err != nil {
				return fmt.Errorf("%s: %s: %w", s.name, path, err)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	var all []memory.Entry
	for _, rec := range records {
		var joined []byte
		for _, name := range rec {
			joined = append(joined, data[name]...)
		}
		entries, err := render.ParseSessionRecord(joined)
		if err != nil && s.name != Local {
			// Another repo's broken or hostile record hides what it holds, not
			// every session of every agent.
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", s.name, rec[0], err)
		}
		all = append(all, entries...)
	}
	return all, nil
}

// bySession groups entries by session, dropping repeats of an id and ordering by time.
// Entries of the same time keep the order they were read in: records in batch order,
// lines in the order the journal's timeline gave them, so that a session reads the same
// from git as from the journal.
func bySession(entries []memory.Entry) map[string][]memory.Entry {
	seen := map[string]bool{}
	out := map[string][]memory.Entry{}
	for _, e := range entries {
		if seen[e.ID()] || e.Validate() != nil {
			continue
		}
		seen[e.ID()] = true
		out[e.Session()] = append(out[e.Session()], e)
	}
	for _, es := range out {
		sort.SliceStable(es, func(a, b int) bool { return es[a].Time().Before(es[b].Time()) })
	}
	return out
}
