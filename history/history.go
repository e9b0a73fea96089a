// Package history reads sessions back from what a memory repo's git branch holds: the
// sessions/ records that every flush commits. It is how replay and sessions work in a
// fresh clone, where there is no journal, or for what the journal no longer holds.
package history

import (
	"bufio"
	"fmt"
	"io"
	"sort"

	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/render"
	"github.com/agmem/agmem/vcs"
)

// Session is the entries of one session found in git, in time order, each entry once.
func Session(repo *vcs.Repo, id string) ([]memory.Entry, error) {
	_, tip, err := repo.Head()
	if err != nil {
		return nil, err
	}
	files, err := repo.ReadDir(tip, render.SessionDir(id))
	if err != nil {
		return nil, err
	}
	entries, err := parse(files)
	if err != nil {
		return nil, err
	}
	return bySession(entries)[id], nil
}

// Sessions is every session found in git, with its entries in time order, except those
// for which known returns true (the journal's, which it describes better).
func Sessions(repo *vcs.Repo, known func(session string) bool) (map[string][]memory.Entry, error) {
	_, tip, err := repo.Head()
	if err != nil {
		return nil, err
	}
	dirs, err := repo.ListDir(tip, render.SessionsDir)
	if err != nil {
		return nil, err
	}
	// A record holds one batch, so one session: its first line says which, and a record
	// of a session the journal knows is not read further.
	var files []vcs.File
	for _, d := range dirs {
		err := repo.EachFile(tip, render.SessionsDir+"/"+d, func(path string, rd io.Reader) error {
			br := bufio.NewReader(rd)
			first, err := br.ReadBytes('\n')
			if err != nil && err != io.EOF {
				return fmt.Errorf("%s: %w", path, err)
			}
			if head, err := render.ParseSessionRecord(first); err == nil && len(head) == 1 && known(head[0].Session()) {
				return nil
			}
			rest, err := io.ReadAll(br)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			files = append(files, vcs.File{Path: path, Data: append(first, rest...)})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	entries, err := parse(files)
	if err != nil {
		return nil, err
	}
	sessions := bySession(entries)
	for id := range sessions {
		if known(id) {
			delete(sessions, id)
		}
	}
	return sessions, nil
}

func parse(files []vcs.File) ([]memory.Entry, error) {
	var all []memory.Entry
	for _, f := range files {
		entries, err := render.ParseSessionRecord(f.Data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		all = append(all, entries...)
	}
	return all, nil
}

// bySession groups entries by session, dropping repeats of an id and ordering by time.
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
		sort.SliceStable(es, func(a, b int) bool {
			if !es[a].Time().Equal(es[b].Time()) {
				return es[a].Time().Before(es[b].Time())
			}
			return es[a].ID() < es[b].ID()
		})
	}
	return out
}
