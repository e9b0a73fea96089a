// Package flush owns the protocol that turns pending journal entries into git commits
// exactly once, whatever process dies at whatever moment:
//
//  1. intent: under the flush lock, the journal takes each session's pending entries
//     out of the pending set and writes them as a batch intent, planned on the tip;
//  2. commit: the batch's files and its session record are written as git objects and
//     a commit carrying "Agmem-Batch: <id>"; the branch moves by compare-and-swap;
//  3. mark: the journal notes the batch as committed;
//  4. materialise: the new files are written into the worktree and the index;
//  5. finish: the journal forgets the batches.
//
// A later flush resumes whatever an earlier one left: a batch with no commit is looked
// for in the history (by its trailer and its session record file) and committed only if
// it is not there; a committed batch is materialised again from git. The journal is open
// only inside each step's own transaction, never across git work.
package flush

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/agmem/agmem/failpoint"
	"github.com/agmem/agmem/flock"
	"github.com/agmem/agmem/journal"
	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/render"
	"github.com/agmem/agmem/vcs"
)

// LockTimeout bounds the wait for another flush to finish.
const LockTimeout = 2 * time.Minute

// maxRebuilds bounds how often one batch is rebuilt on a tip that moved under it.
const maxRebuilds = 20

// Commit is one commit a flush wrote.
type Commit struct {
	Hash         string
	Session      string
	Observations int
	Events       int
}

// Run flushes every pending entry of the journal kept in stateDir into repo, and returns
// the commits it wrote.
func Run(stateDir string, j *journal.Journal, repo *vcs.Repo) ([]Commit, error) {
	lock, err := flock.Acquire(filepath.Join(stateDir, "flush.lock"), LockTimeout)
	if err != nil {
		return nil, fmt.Errorf("wait for another flush: %w", err)
	}
	defer lock.Release()

	branch, err := repo.Branch()
	if err != nil {
		return nil, err
	}
	tip, err := repo.Tip(branch)
	if err != nil {
		return nil, err
	}
	batches, err := j.PrepareBatches(hashString(tip), time.Now().UTC())
	if err != nil {
		return nil, err
	}
	if len(batches) == 0 {
		return nil, nil
	}
	failpoint.Hit("flush-after-intent")

	var commits []Commit
	var changes []vcs.Change
	for _, b := range batches {
		var files []vcs.Change
		switch {
		case b.Commit != "":
			files, err = repo.AddedFiles(plumbing.NewHash(b.Commit))
		case b.Resumed:
			var found bool
			var h plumbing.Hash
			if tip, err = repo.Tip(branch); err != nil {
				return commits, err
			}
			h, found, err = repo.FindBatch(tip, plumbing.NewHash(b.Base), b.ID, render.SessionRecordPath(b.Session, b.ID))
			if err != nil {
				break
			}
			if found {
				if err = j.MarkCommitted(b, h.String()); err == nil {
					files, err = repo.AddedFiles(h)
				}
				break
			}
			fallthrough
		default:
			var c Commit
			c, files, err = commitBatch(j, repo, branch, b)
			if err == nil {
				commits = append(commits, c)
			}
		}
		if err != nil {
			return commits, fmt.Errorf("flush session %s: %w", b.Session, err)
		}
		changes = append(changes, files...)
	}

	if err := repo.Materialize(changes); err != nil {
		return commits, fmt.Errorf("update worktree and index: %w", err)
	}
	failpoint.Hit("flush-before-finish")
	return commits, j.Finish(batches, time.Now().UTC())
}

// commitBatch writes one batch as a commit on the branch tip, building it again on the
// new tip if someone else moved the branch meanwhile, and marks it in the journal.
func commitBatch(j *journal.Journal, repo *vcs.Repo, branch plumbing.ReferenceName, b *journal.Batch) (Commit, []vcs.Change, error) {
	var obs []memory.Observation
	var events []memory.Event
	for _, e := range b.Entries {
		if e.Observation != nil {
			obs = append(obs, *e.Observation)
		} else {
			events = append(events, *e.Event)
		}
	}
	subject, body := render.Message(obs, events)
	message := vcs.FormatMessage(subject, body, trailers(b, obs, events))

	for attempt := 0; ; attempt++ {
		tip, err := repo.Tip(branch)
		if err != nil {
			return Commit{}, nil, err
		}
		draft, err := repo.NewDraft(tip)
		if err != nil {
			return Commit{}, nil, err
		}
		if err := addFiles(draft, b, obs); err != nil {
			return Commit{}, nil, err
		}
		h, err := draft.Commit(branch, message, time.Now())
		if errors.Is(err, vcs.ErrRefMoved) && attempt < maxRebuilds {
			continue
		}
		if err != nil {
			return Commit{}, nil, err
		}
		failpoint.Hit("flush-after-ref")
		if err := j.MarkCommitted(b, h.String()); err != nil {
			return Commit{}, nil, err
		}
		failpoint.Hit("flush-after-mark")
		return Commit{Hash: h.String(), Session: b.Session, Observations: len(obs), Events: len(events)},
			draft.Changes(), nil
	}
}

// addFiles puts each observation's markdown at its path (the long form of the path if
// the short one is taken) and the batch's session record.
func addFiles(draft *vcs.Draft, b *journal.Batch, obs []memory.Observation) error {
	for i := range obs {
		o := &obs[i]
		path := render.Path(o, false)
		taken, err := draft.Exists(path)
		if err != nil {
			return err
		}
		if taken {
			path = render.Path(o, true)
			if taken, err = draft.Exists(path); err != nil {
				return err
			} else if taken {
				return fmt.Errorf("observation %s: %s is already in the repo", o.ID, path)
			}
		}
		if err := draft.Put(path, render.Markdown(o)); err != nil {
			return err
		}
	}
	return draft.Put(render.SessionRecordPath(b.Session, b.ID), render.SessionRecord(b.Entries))
}

func trailers(b *journal.Batch, obs []memory.Observation, events []memory.Event) []vcs.Trailer {
	t := []vcs.Trailer{
		{Key: vcs.TrailerSession, Value: b.Session},
		{Key: vcs.TrailerObservations, Value: fmt.Sprint(len(obs))},
	}
	if len(events) > 0 {
		t = append(t, vcs.Trailer{Key: vcs.TrailerEvents, Value: fmt.Sprint(len(events))})
	}
	t = append(t, vcs.Trailer{Key: vcs.TrailerBatch, Value: b.ID})
	if src := source(b.Entries); src != "" {
		t = append(t, vcs.Trailer{Key: vcs.TrailerSource, Value: src})
	}
	return append(t, vcs.Trailer{Key: vcs.TrailerAutoCommit, Value: "true"})
}

func source(entries []memory.Entry) string {
	for _, e := range entries {
		if src := e.Source(); src != "" {
			return src
		}
	}
	return ""
}

func hashString(h plumbing.Hash) string {
	if h.IsZero() {
		return ""
	}
	return h.String()
}
