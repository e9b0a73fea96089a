package maintain

import (
	"github.com/agmem/agmem/flush"
	"github.com/agmem/agmem/journal"
	"github.com/agmem/agmem/vcs"
)

// Repaired is what Repair did.
type Repaired struct {
	Requeued int            `json:"requeued"` // entries whose commit was gone, pending again
	Commits  []flush.Commit `json:"commits"`  // what the flush that followed wrote
	Restored []string       `json:"restored"` // files put back into the worktree from HEAD
}

// Repair resolves what can be resolved, then checks again and returns what is left:
//
//  1. entries whose commit the branch no longer holds go back into the pending set;
//  2. a flush commits them and finishes every batch an earlier flush left, exactly as
//     the next `agmem flush` would;
//  3. files of HEAD under current/ and sessions/ that the worktree lacks are written
//     back from HEAD.
//
// Nothing recorded is deleted, and no file the worktree holds is overwritten. A
// damaged journal is not written to, and entries pending that a commit already holds
// would be committed twice: Repair then does nothing and returns the report.
func Repair(stateDir string, j *journal.Journal, repo *vcs.Git, opts flush.Options) (Repaired, *Report, error) {
	var done Repaired
	requeued, report, err := requeueLost(stateDir, j, repo)
	if err != nil || report.Damaged() || report.Has(PendingCommitted) {
		return done, report, err
	}
	done.Requeued = requeued
	if done.Commits, err = flush.Run(stateDir, j, repo, opts); err != nil {
		return done, nil, err
	}
	if done.Restored, err = restoreWorktree(stateDir, repo); err != nil {
		return done, nil, err
	}
	report, err = Check(stateDir, j, repo)
	return done, report, err
}

// requeueLost puts the entries of LostCommit problems back into the pending set, and
// returns how many and the check that found them. The check and the requeue run under
// one writer lock: no flush can commit them in between.
func requeueLost(stateDir string, j *journal.Journal, repo *vcs.Git) (int, *Report, error) {
	lock, err := flush.Lock(stateDir)
	if err != nil {
		return 0, nil, err
	}
	defer lock.Release()
	report, err := check(j, repo)
	if err != nil || report.Has(PendingCommitted) {
		return 0, report, err
	}
	var ids []string
	for _, p := range report.Problems {
		if p.Kind == LostCommit {
			ids = append(ids, p.Entries...)
		}
	}
	if len(ids) == 0 {
		return 0, report, nil
	}
	n, err := j.Requeue(ids)
	return n, report, err
}

// restoreWorktree writes back HEAD's files under current/ and sessions/ that the
// worktree lacks, and returns their paths. Whether a file is missing is decided under
// git's index lock, so a file that appears meanwhile is never overwritten.
func restoreWorktree(stateDir string, repo *vcs.Git) ([]string, error) {
	lock, err := flush.Lock(stateDir)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	_, tip, err := repo.Head()
	if err != nil {
		return nil, err
	}
	files, err := agmemFiles(repo, tip)
	if err != nil {
		return nil, err
	}
	index, err := repo.LockIndex()
	if err != nil {
		return nil, err
	}
	defer index.Release()
	var missing []string
	for _, p := range againstWorktree(repo, files) {
		if p.Kind == MissingFromWorktree {
			missing = append(missing, p.Path)
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	changes, err := repo.FilesAt(tip, missing)
	if err != nil {
		return nil, err
	}
	return missing, index.Materialize(changes)
}
