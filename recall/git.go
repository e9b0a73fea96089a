// Package recall reads memory back. This file and its neighbours read sessions from
// what git holds: the sessions/ records that every flush commits, on this memory repo's
// own branch and on the branches of the other memory repos that agmem pull fetched
// (refs/remotes/<remote>/agents/<repo id>). It is how replay and sessions work in a
// fresh clone, where there is no journal, for what the journal no longer holds (agmem
// gc), and for the sessions of other agents.
//
// A batch's record may be split into parts (render.SessionRecordParts); recall reads a
// record as its parts joined in order.
package recall

import (
	"fmt"
	"path"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/agmem/agmem/capture"
	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/redact"
	"github.com/agmem/agmem/render"
	"github.com/agmem/agmem/vcs"
)

// Local names this memory repo's own branch as the place a session was read from.
const Local = "local"

// source is a branch that recall reads sessions from.
type source struct {
	name string // Local, or a fetched branch: "origin/agents/<repo id>"
	tip  plumbing.Hash
}

// fetchedPolicy redacts what a fetched branch holds before it is indexed or given back
// (fromFetched): capture's defaults.
var fetchedPolicy = sync.OnceValue(capture.DefaultPolicy)

// fromFetched is an entry of a fetched branch as a reader may give it back: redacted as
// this agmem records (capture.Redacted), whatever agmem, settings or person wrote it.
func fromFetched(e memory.Entry) memory.Entry { return capture.Redacted(e, fetchedPolicy()) }

// ShownSession is a session id as readers give it back: a fetched branch's, which
// another agmem may have kept with a secret in it, made safe as this one records ids;
// this repo's own, already so, as it is.
func ShownSession(id string) string { return fetchedPolicy().SafeSession(id) }

// filedAsItsSession says whether the record at file is in the directory of session, in
// either layout: where agmem files it, and replay reads it. A fetched branch's record
// filed elsewhere (anyone may push one) is not read as the session's.
func filedAsItsSession(file, session string) bool {
	dir := path.Dir(file)
	for _, l := range render.Layouts {
		if l.SessionDir(session) == dir {
			return true
		}
	}
	return false
}

// sessionDirsOf are the directories on branch s that may hold records of session, an
// id as readers give it back: its directory in each layout; and on a fetched branch, for
// an id with a secret redacted (capture.Policy.SafeSession), every session directory
// whose name holds a secret, since the records in it hold the id before it was made
// safe, and are told from others by their lines.
func sessionDirsOf(repo *vcs.Git, s source, session string) ([]string, error) {
	var dirs []string
	for _, l := range render.Layouts {
		dirs = append(dirs, l.SessionDir(session))
	}
	if s.name == Local || len(redact.MarkRules(session)) == 0 {
		return dirs, nil
	}
	all, err := sessionDirs(repo, s)
	if err != nil {
		return nil, err
	}
	for _, d := range all {
		if name := path.Base(d); ShownSession(name) != name {
			dirs = append(dirs, d)
		}
	}
	return dirs, nil
}

// sources are this repo's branch, then the fetched branches of other memory repos.
func sources(repo *vcs.Git) ([]source, error) {
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
func Session(repo *vcs.Git, id string) ([]memory.Entry, error) {
	var out []memory.Entry
	_, err := SessionJSON(repo, id, func(raw []byte) error {
		e, err := memory.DecodeEntry(raw)
		if err != nil {
			return fmt.Errorf("session %s: %w", id, err)
		}
		out = append(out, e)
		return nil
	})
	return out, err
}
