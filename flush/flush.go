// Package flush owns the protocol that turns pending journal entries into git commits
// exactly once, whatever process dies at whatever moment:
//
//  1. intent: under the flush lock, the journal takes each session's pending entries
//     out of the pending set and writes them as a batch intent, planned on the tip;
//  2. commit: each batch becomes a commit carrying "Agmem-Batch: <id>" with its files
//     and its session record, chained on the branch tip; a round's objects are written
//     as one pack, then the branch moves once, by compare-and-swap, to its last commit;
//  3. mark: the journal notes each batch as committed;
//  4. materialise: the new files are written into the worktree and the index;
//  5. finish: the journal forgets the batches.
//
// Steps 2 to 5 run in rounds of a few batches, oldest first (see maxRoundBatches); a
// session's pending entries become batches of at most [flush] max_batch entries.
// A later flush resumes whatever an earlier one left, before step 1: a batch with no
// commit is looked for in the history (by its trailer and its session record file) and
// committed only if it is not there; a committed batch is materialised again from git.
// The journal is open only inside each step's own transaction, never across git work.
//
// Messages are written between intent and commit, before git's index lock is taken: a
// model asked for them (within its time budget) never holds up the user's git commands,
// and a model that fails only means agmem's template writes the message.
package flush

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/agmem/agmem/internal/config"
	"github.com/agmem/agmem/internal/failpoint"
	"github.com/agmem/agmem/internal/flock"
	"github.com/agmem/agmem/journal"
	"github.com/agmem/agmem/llm"
	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/render"
	"github.com/agmem/agmem/sign"
	"github.com/agmem/agmem/vcs"
)

// LockTimeout bounds the wait for another flush to show progress: a flush marks the lock
// file each time it finishes a round, and a waiter gives up only after LockTimeout
// without a mark. A flush of a big backlog takes longer than that, in many rounds.
const LockTimeout = 2 * time.Minute

// maxRebuilds bounds how often one batch is rebuilt on a tip that moved under it.
const maxRebuilds = 20

// Commit is one commit a flush wrote.
type Commit struct {
	Hash         string
	Session      string
	Observations int
	Events       int
	Signing      journal.Signing
}

// Options are how a flush writes its commit messages.
type Options struct {
	// LLM asks a model for each commit's message; its zero value (no API key) asks
	// nothing, and agmem's template writes every message.
	LLM llm.Settings
	// Sign is when commits are signed ([audit] sign); "" is as git's commit.gpgSign says.
	Sign sign.Mode
	// MaxBatch bounds the entries of one commit ([flush] max_batch); 0 is the default.
	MaxBatch int
	// Warn is told, once per flush, why some messages came from the template after all,
	// and why some commits are unsigned; the flush goes on regardless. Nil: nobody is
	// told.
	Warn func(error)
}

// Run flushes every pending entry of the journal kept in stateDir into repo, and returns
// the commits it wrote. What earlier flushes left behind goes first, a round at a time.
func Run(stateDir string, j *journal.Journal, repo *vcs.Git, opts Options) ([]Commit, error) {
	lock, err := Lock(stateDir)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	// Marked now too: looking for what killed flushes left, and a model writing messages,
	// come before the first round's mark, and a waiter must not judge this flush by the
	// mark the last one left.
	markProgress(stateDir)
	// What records kept aside while others held the journal is flushed too, whatever
	// its backlog (each write adds only what it can in a moment).
	if err := j.Drain(); err != nil {
		return nil, err
	}

	branch, err := repo.Branch()
	if err != nil {
		return nil, err
	}
	r := &run{stateDir: stateDir, j: j, repo: repo, branch: branch, opts: opts,
		maxBatch: cmp.Or(opts.MaxBatch, config.DefaultMaxBatch), sg: newSigning(repo, opts),
		llmDeadline: time.Now().Add(opts.LLM.Budget)}
	defer r.sg.close()
	// What earlier flushes left goes first; then what is pending now, planned in batches
	// of at most max_batch entries; each loaded a round's worth at a time.
	commits, err := r.flushUnfinished(nil)
	if err != nil {
		return commits, err
	}
	tip, err := repo.Tip(branch)
	if err != nil {
		return commits, err
	}
	planned, err := j.PlanBatches(hashString(tip), time.Now().UTC(), r.maxBatch)
	if err != nil || len(planned) == 0 {
		return commits, err
	}
	failpoint.Hit("flush-after-intent")
	done, err := r.flushUnfinished(planned)
	return append(commits, done...), err
}

// run is one flush under way.
type run struct {
	stateDir    string
	j           *journal.Journal
	repo        *vcs.Git
	branch      plumbing.ReferenceName
	opts        Options
	maxBatch    int
	sg          *signing
	llmDeadline time.Time // for all the flush's requests to a model
	llmWarned   bool
}

// flushUnfinished flushes every batch no flush has finished, in rounds, each loaded
// when its turn comes. Those this flush planned (ids in planned) are known to have no
// commit yet.
func (r *run) flushUnfinished(planned []string) ([]Commit, error) {
	var commits []Commit
	for {
		round, err := r.j.Leftovers(maxRoundBatches, min(maxRoundEntries, r.maxBatch))
		if err != nil || len(round) == 0 {
			return commits, err
		}
		if len(commits) > 0 {
			failpoint.Hit("flush-between-rounds")
		}
		for _, b := range round {
			b.Resumed = !slices.Contains(planned, b.ID)
		}
		done, err := r.flushBatches(round)
		commits = append(commits, done...)
		if err != nil {
			return commits, err
		}
		markProgress(r.stateDir)
		// Merging packs only keeps lookups fast; if this round cannot, the next tries.
		r.repo.MergePacks()
	}
}

// A flush takes its batches through steps 2 to 5 in rounds, oldest first, each round
// finished before the next starts: a flush killed at any moment loses at most one
// round's work, so a backlog (batches that killed flushes left behind, many sessions,
// a session bigger than a batch) is worked off whatever the kills, not started over
// each time, and a flush holds one round in memory, not the backlog.
// A round's git work grows with its batches (each commit writes the trees on its
// paths), so rounds are large enough to share the cost of rewriting the index and
// small enough to finish quickly. A round holds at most max_batch entries, or one
// batch.
const (
	maxRoundBatches = 16
	maxRoundEntries = 10000
)

// flushBatches takes the batches of one round through steps 2 to 5.
func (r *run) flushBatches(batches []*journal.Batch) ([]Commit, error) {
	// Batches an earlier flush left behind may be in the history already.
	for _, b := range batches {
		if b.Commit == "" && b.Resumed {
			h, found, err := findResumed(r.repo, r.branch, b)
			if err != nil {
				return nil, fmt.Errorf("flush session %s: %w", b.Session, err)
			}
			if found {
				c, err := r.repo.Commit(h)
				if err != nil {
					return nil, err
				}
				if err := r.j.MarkCommitted(b, h.String(), journal.Signing{Signed: c.PGPSignature != ""}); err != nil {
					return nil, err
				}
			}
		}
	}

	// The key made ready before a model is asked and before the index lock is taken: a
	// flush that cannot sign where it must fails before it costs anything, and an
	// ssh-agent or gpg slow to answer keeps no git command waiting.
	if slices.ContainsFunc(batches, func(b *journal.Batch) bool { return b.Commit == "" }) {
		if _, err := r.sg.ready(); err != nil {
			return nil, err
		}
	}
	// Written before the index lock is taken: git commands must never wait on a model.
	messages := r.writeMessages(batches)
	return r.flushRound(batches, messages)
}

// flushRound commits, marks, materialises and finishes batches.
func (r *run) flushRound(batches []*journal.Batch, messages map[string]string) ([]Commit, error) {
	// Held from before the branch moves until the index shows the new files.
	index, err := r.repo.LockIndex()
	if err != nil {
		return nil, err
	}
	defer index.Release()

	var toCommit []*journal.Batch
	var changes []vcs.Change // of the batches already committed
	for _, b := range batches {
		if b.Commit == "" {
			toCommit = append(toCommit, b)
			continue
		}
		files, err := r.repo.AddedFiles(plumbing.NewHash(b.Commit))
		if err != nil {
			return nil, fmt.Errorf("flush session %s: read commit %s: %w", b.Session, b.Commit, err)
		}
		changes = append(changes, files...)
	}

	commits, files, err := commitBatches(r.repo, r.branch, toCommit, messages, r.sg)
	if err != nil {
		return nil, err
	}
	failpoint.Hit("flush-after-ref")
	for i, b := range toCommit {
		if err := r.j.MarkCommitted(b, commits[i].Hash, commits[i].Signing); err != nil {
			return commits, err
		}
		failpoint.Hit("flush-after-mark")
	}
	changes = append(changes, files...)

	if err := index.Materialize(changes); err != nil {
		return commits, fmt.Errorf("update worktree and index: %w", err)
	}
	failpoint.Hit("flush-before-finish")
	return commits, r.j.Finish(batches, time.Now().UTC())
}

// Lock takes the writer lock of the memory repo whose state directory is stateDir: one
// agmem process at a time writes to its git repository. It waits for another flush to
// finish as long as that flush makes progress (see LockTimeout); records go on meanwhile.
func Lock(stateDir string) (*flock.Lock, error) {
	return lockWaiting(lockPath(stateDir), LockTimeout)
}

func lockPath(stateDir string) string { return filepath.Join(stateDir, "flush.lock") }

func lockWaiting(path string, timeout time.Duration) (*flock.Lock, error) {
	progressing := func() bool {
		fi, err := os.Stat(path)
		return err == nil && time.Since(fi.ModTime()) < timeout
	}
	lock, err := flock.AcquireWhile(path, timeout, progressing)
	if err != nil {
		return nil, fmt.Errorf("wait for another flush: %w", err)
	}
	return lock, nil
}

// markProgress tells a flush waiting for the lock that this one is not stuck.
func markProgress(stateDir string) {
	now := time.Now()
	os.Chtimes(lockPath(stateDir), now, now)
}

// findResumed looks for the commit of a batch an earlier flush planned, between the
// branch tip and the tip the batch was planned on.
func findResumed(repo *vcs.Git, branch plumbing.ReferenceName, b *journal.Batch) (plumbing.Hash, bool, error) {
	tip, err := repo.Tip(branch)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	var records []string
	for _, l := range render.Layouts {
		records = append(records, l.SessionRecordPath(b.Session, b.ID))
	}
	return repo.FindBatch(tip, plumbing.NewHash(b.Base), b.ID, records)
}

// writeMessages writes the commit message of each batch that has no commit yet, keyed
// by batch id: the model's where it wrote a usable one, the template's elsewhere.
// A flush of many rounds asks for each round's messages in what is left of one budget,
// and warns once.
func (r *run) writeMessages(batches []*journal.Batch) map[string]string {
	var pending []*journal.Batch
	var described [][]memory.Observation
	for _, b := range batches {
		if b.Commit == "" {
			obs, _ := split(b.Entries)
			pending = append(pending, b)
			described = append(described, obs)
		}
	}
	ask := r.opts.LLM
	ask.Deadline = r.llmDeadline
	written, err := ask.Write(described)
	if err != nil && r.opts.Warn != nil && !r.llmWarned {
		r.llmWarned = true
		r.opts.Warn(err)
	}
	messages := make(map[string]string, len(pending))
	for i, b := range pending {
		obs, events := split(b.Entries)
		subject, body := render.Message(obs, events)
		model := templateModel
		if m := written[i]; m.Model != "" {
			subject, body, model = cmp.Or(m.Subject, subject), m.Body, m.Model
		}
		messages[b.ID] = vcs.FormatMessage(subject, body, Trailers(b.Session, b.ID, b.Entries, model))
	}
	return messages
}

// templateModel is the Agmem-Message-Model of a message agmem's template wrote.
const templateModel = "template"

// commitBatches writes one commit per batch, chained on the branch tip, with the
// batch's message, and moves the branch once to the last of them; if someone else moved
// the branch meanwhile, it builds them again on the new tip.
func commitBatches(repo *vcs.Git, branch plumbing.ReferenceName, batches []*journal.Batch, messages map[string]string, sg *signing) ([]Commit, []vcs.Change, error) {
	if len(batches) == 0 {
		return nil, nil, nil
	}
	signer, err := sg.ready()
	if err != nil {
		return nil, nil, err
	}
	for attempt := 0; ; attempt++ {
		tip, err := repo.Tip(branch)
		if err != nil {
			return nil, nil, err
		}
		draft, err := repo.NewDraft(tip)
		if err != nil {
			return nil, nil, err
		}
		if signer != nil {
			draft.SignWith(signer)
		}
		commits := make([]Commit, len(batches))
		now := time.Now()
		// The first batch of a repo that does not say its layout says it.
		layout, err := ensureLayout(repo, draft, tip)
		if err != nil {
			return nil, nil, err
		}
		for i, b := range batches {
			obs, events := split(b.Entries)
			if err := addFiles(draft, layout, b, obs); err != nil {
				return nil, nil, fmt.Errorf("flush session %s: %w", b.Session, err)
			}
			h, err := draft.Seal(messages[b.ID], now)
			if err != nil {
				return nil, nil, fmt.Errorf("flush session %s: %w", b.Session, err)
			}
			commits[i] = Commit{Hash: h.String(), Session: b.Session, Observations: len(obs), Events: len(events),
				Signing: sg.last}
		}
		err = draft.Publish(branch)
		if errors.Is(err, vcs.ErrRefMoved) && attempt < maxRebuilds {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		return commits, draft.Changes(), nil
	}
}

func split(entries []memory.Entry) ([]memory.Observation, []memory.Event) {
	var obs []memory.Observation
	var events []memory.Event
	for _, e := range entries {
		if e.Observation != nil {
			obs = append(obs, *e.Observation)
		} else {
			events = append(events, *e.Event)
		}
	}
	return obs, events
}

// addFiles puts each observation's markdown at its path (the long form of the path if
// the short one is taken) and the batch's session record, in parts of at most
// render.MaxRecordPart; findResumed knows a batch by its first part.
func addFiles(draft *vcs.Draft, layout render.Layout, b *journal.Batch, obs []memory.Observation) error {
	for i := range obs {
		o := &obs[i]
		path := layout.Path(o, false)
		taken, err := draft.Exists(path)
		if err != nil {
			return err
		}
		if taken {
			path = layout.Path(o, true)
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
	for _, part := range render.SessionRecordParts(layout.SessionRecordPath(b.Session, b.ID), b.Entries) {
		if err := draft.Put(part.Path, part.Data); err != nil {
			return err
		}
	}
	return nil
}

// Trailers are the trailer block of the commit of batch of session, holding entries,
// whose message model wrote (FORMAT.md §Trailers); agmem audit holds each commit's
// against the record it holds.
func Trailers(session, batch string, entries []memory.Entry, model string) []vcs.Trailer {
	obs, events := split(entries)
	t := []vcs.Trailer{
		{Key: vcs.TrailerSession, Value: session},
		{Key: vcs.TrailerObservations, Value: fmt.Sprint(len(obs))},
	}
	if len(events) > 0 {
		t = append(t, vcs.Trailer{Key: vcs.TrailerEvents, Value: fmt.Sprint(len(events))})
	}
	t = append(t, vcs.Trailer{Key: vcs.TrailerBatch, Value: batch})
	if src := source(entries); src != "" {
		t = append(t, vcs.Trailer{Key: vcs.TrailerSource, Value: src})
	}
	return append(t, vcs.Trailer{Key: vcs.TrailerRedactions, Value: fmt.Sprint(redactions(obs, events))},
		vcs.Trailer{Key: vcs.TrailerMessageModel, Value: model},
		vcs.Trailer{Key: vcs.TrailerAutoCommit, Value: "true"})
}

func redactions(obs []memory.Observation, events []memory.Event) int {
	n := 0
	for i := range obs {
		n += obs[i].Redactions
	}
	for i := range events {
		n += events[i].Redactions
	}
	return n
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
