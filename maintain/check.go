package maintain

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/agmem/agmem/flush"
	"github.com/agmem/agmem/journal"
	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/render"
	"github.com/agmem/agmem/vcs"
)

// Kind is what sort of problem a Problem is.
type Kind string

const (
	// Duplicate: an entry or a batch in two commits of the branch.
	Duplicate Kind = "duplicate"
	// PendingCommitted: an entry pending again that a commit of the branch already holds
	// (the next flush would commit it twice). Repair flushes nothing while there is one.
	PendingCommitted Kind = "pending-and-committed"
	// LostCommit: entries the journal counts as committed that no commit of the branch
	// holds, such as after `git reset --hard` past an agmem commit. Repair commits them
	// again.
	LostCommit Kind = "missing-from-branch"
	// TrailerMismatch: a commit whose trailers do not match its session record.
	TrailerMismatch Kind = "trailer-mismatch"
	// Unfinished: a batch a flush planned and did not finish. Repair finishes it, as the
	// next flush would.
	Unfinished Kind = "unfinished-batch"
	// MissingFromHead: a file an agmem commit wrote that HEAD no longer holds.
	MissingFromHead Kind = "missing-from-head"
	// MissingFromWorktree: a file of HEAD under current/ or sessions/ that the worktree
	// lacks. Repair restores it from HEAD.
	MissingFromWorktree Kind = "missing-from-worktree"
	// EditedByHand: a file of HEAD under current/ or sessions/ that the worktree holds
	// differently. Never overwritten: a person's edit is theirs to commit or undo.
	EditedByHand Kind = "edited-in-worktree"
	// Unexplained: a file of HEAD under current/ or sessions/ that no commit of agmem's
	// wrote.
	Unexplained Kind = "unexplained-file"
	// DamagedJournal: what journal.Check finds wrong with the journal file.
	DamagedJournal Kind = "damaged-journal"
	// OnOtherBranch: entries the journal counts as committed that the checked-out branch
	// lacks and another local branch holds: HEAD was switched by hand. Committing them
	// again would put them twice in the history, so Repair leaves them.
	OnOtherBranch Kind = "on-other-branch"
)

// Repairable says whether Repair resolves problems of this kind.
func (k Kind) Repairable() bool {
	return k == LostCommit || k == Unfinished || k == MissingFromWorktree
}

// Problem is one inconsistency, said in one line.
type Problem struct {
	Kind    Kind     `json:"kind"`
	Message string   `json:"message"`
	Path    string   `json:"path,omitempty"`    // the file it is about, if any
	Entries []string `json:"entries,omitempty"` // the entries it is about, when it names some
}

func (p Problem) String() string { return string(p.Kind) + ": " + p.Message }

// Report is what a check found.
type Report struct {
	Branch              string    `json:"branch"`
	Head                string    `json:"head,omitempty"`
	Commits             int       `json:"agmem_commits"` // on the branch
	Observations        int       `json:"observations"`  // in those commits
	Events              int       `json:"events"`
	PendingObservations int       `json:"pending_observations"`
	PendingEvents       int       `json:"pending_events"`
	Problems            []Problem `json:"problems"`
}

// Consistent says whether the check found no problem. Pending entries are no problem.
func (r *Report) Consistent() bool { return len(r.Problems) == 0 }

// Repairable says whether Repair can resolve at least one of the problems found.
func (r *Report) Repairable() bool {
	return slices.ContainsFunc(r.Problems, func(p Problem) bool { return p.Kind.Repairable() })
}

// Check cross-checks the journal kept in stateDir and the repo, under the writer lock.
func Check(stateDir string, j *journal.Journal, repo *vcs.Git) (*Report, error) {
	lock, err := flush.Lock(stateDir)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	return check(j, repo)
}

func check(j *journal.Journal, repo *vcs.Git) (*Report, error) {
	// Read first and whole: the journal is closed again before any git work.
	damage, inv, err := readJournal(j)
	if err != nil {
		return nil, err
	}
	branch, tip, err := repo.Head()
	if err != nil {
		return nil, err
	}
	r := &Report{Branch: branch.Short(), Problems: damage}
	if !tip.IsZero() {
		r.Head = tip.String()
	}
	b, err := readBranch(repo, tip, nil)
	if err != nil {
		return nil, err
	}
	r.Commits, r.Observations, r.Events = len(b.batches), b.observations, b.events
	r.Problems = append(r.Problems, b.problems...)
	if inv != nil {
		others, err := readOtherBranches(repo, branch, b)
		if err != nil {
			return nil, err
		}
		r.Problems = append(r.Problems, b.againstJournal(inv, others, r)...)
	}
	files, err := agmemFiles(repo, tip)
	if err != nil {
		return nil, err
	}
	r.Problems = append(r.Problems, b.againstHead(files)...)
	r.Problems = append(r.Problems, againstWorktree(repo, files)...)
	return r, nil
}

// readJournal checks the journal file, and reads its inventory unless it is damaged:
// what a damaged journal says is not worth comparing with git.
func readJournal(j *journal.Journal) ([]Problem, *journal.Inventory, error) {
	findings, err := j.Check()
	if err != nil && !errors.Is(err, os.ErrNotExist) { // a missing journal is an empty one
		return nil, nil, err
	}
	damage := []Problem{}
	for _, f := range findings {
		damage = append(damage, Problem{Kind: DamagedJournal, Message: f})
	}
	if len(damage) > 0 {
		return damage, nil, nil
	}
	inv, err := j.Inventory()
	return damage, inv, err
}

// Damaged says whether the journal file itself is damaged.
func (r *Report) Damaged() bool { return r.Has(DamagedJournal) }

// Has says whether the check found a problem of kind k.
func (r *Report) Has(k Kind) bool {
	return slices.ContainsFunc(r.Problems, func(p Problem) bool { return p.Kind == k })
}

// branch is what the agmem commits reachable from the branch tip hold.
type branch struct {
	reachable    map[plumbing.Hash]bool
	batches      map[string]plumbing.Hash // batch id → its commit
	entries      map[string]plumbing.Hash // entry id → the commit whose record holds it
	records      map[string]string        // path of a record part → its batch
	rendered     []named                  // each committed observation, by what names its markdown
	observations int
	events       int
	problems     []Problem
	// sessions with a commit on the branch whose record cannot be read: which of their
	// entries it holds is unknown, so none of them counts as lost.
	unreadable map[string]bool
}

// named is what names an observation's markdown file (render.Layout.Path), which is all
// a check keeps of each: the whole of an observation, for each of a year's million,
// was most of what it held.
type named struct {
	id, tool string
	typ      memory.Type
	at       time.Time
}

// readBranch reads every commit reachable from tip, except those in skip and what only
// they reach, and the session record of each that carries an Agmem-Batch trailer.
func readBranch(repo *vcs.Git, tip plumbing.Hash, skip map[plumbing.Hash]bool) (*branch, error) {
	b := &branch{reachable: map[plumbing.Hash]bool{}, batches: map[string]plumbing.Hash{},
		entries: map[string]plumbing.Hash{}, records: map[string]string{}, unreadable: map[string]bool{}}
	twice := map[[2]plumbing.Hash][]string{} // entries found in both commits
	var pairs [][2]plumbing.Hash
	queue := []plumbing.Hash{tip}
	for len(queue) > 0 {
		h := queue[0]
		queue = queue[1:]
		if h.IsZero() || b.reachable[h] || skip[h] {
			continue
		}
		b.reachable[h] = true
		c, err := repo.Commit(h)
		if err != nil {
			return nil, fmt.Errorf("read commit %s: %w", h, err)
		}
		queue = append(queue, c.ParentHashes...)
		entries, err := b.readBatch(repo, h, c)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if first, seen := b.entries[e.ID()]; seen {
				pair := [2]plumbing.Hash{first, h}
				if twice[pair] == nil {
					pairs = append(pairs, pair)
				}
				twice[pair] = append(twice[pair], e.ID())
				continue
			}
			b.entries[e.ID()] = h
			if o := e.Observation; o != nil {
				b.observations++
				b.rendered = append(b.rendered, named{o.ID, o.ToolName, o.MemoryType, o.Timestamp})
			} else {
				b.events++
			}
		}
	}
	for _, pair := range pairs {
		ids := twice[pair]
		b.problems = append(b.problems, Problem{Kind: Duplicate, Entries: ids, Message: fmt.Sprintf(
			"%s in both commit %s and commit %s (first: %s)", entriesText(len(ids)), short(pair[0]), short(pair[1]), ids[0])})
	}
	return b, nil
}

// readBatch reads the session record of an agmem commit and checks it against the
// commit's trailers; it returns the record's entries (none for another commit).
func (b *branch) readBatch(repo *vcs.Git, h plumbing.Hash, c *object.Commit) ([]memory.Entry, error) {
	trailers := vcs.ParseTrailers(c.Message)
	batch := vcs.TrailerValue(trailers, vcs.TrailerBatch)
	if batch == "" {
		return nil, nil
	}
	mismatch := func(format string, args ...any) {
		b.problems = append(b.problems, Problem{Kind: TrailerMismatch,
			Message: fmt.Sprintf("commit %s (batch %s): ", short(h), batch) + fmt.Sprintf(format, args...)})
	}
	if first, seen := b.batches[batch]; seen {
		b.problems = append(b.problems, Problem{Kind: Duplicate,
			Message: fmt.Sprintf("batch %s in both commit %s and commit %s", batch, short(first), short(h))})
		return nil, nil
	}
	b.batches[batch] = h
	session := vcs.TrailerValue(trailers, vcs.TrailerSession)
	entries, parts, err := ReadRecord(repo, c, session, batch)
	if err == nil && parts == nil {
		err = fmt.Errorf("no session record %s", render.CurrentLayout.SessionRecordPath(session, batch))
	}
	if err != nil {
		mismatch("%v", err)
		b.unreadable[session] = true
		return nil, nil
	}
	for _, p := range parts {
		b.records[p] = batch
	}
	observations, events := 0, 0
	for _, e := range entries {
		if e.Observation != nil {
			observations++
		} else {
			events++
		}
	}
	for _, t := range []struct {
		key  string
		held int
	}{{vcs.TrailerObservations, observations}, {vcs.TrailerEvents, events}} {
		said := vcs.TrailerValue(trailers, t.key)
		if said == "" && t.key == vcs.TrailerEvents {
			said = "0" // written only when there are events
		}
		if n, err := strconv.Atoi(said); err != nil || n != t.held {
			mismatch("%s: %q, but its session record holds %d", t.key, said, t.held)
		}
	}
	return entries, nil
}

// ReadRecord reads the session record of batch in commit c, joined from its parts, and
// the paths of those parts; no parts when the commit holds no such record. The record
// is looked for where each layout puts it.
func ReadRecord(repo *vcs.Git, c *object.Commit, session, batch string) ([]memory.Entry, []string, error) {
	for _, l := range render.Layouts {
		first := l.SessionRecordPath(session, batch)
		files, err := repo.FilesIn(c.Hash, path.Dir(first))
		if err != nil {
			return nil, nil, err
		}
		names := make([]string, len(files))
		blobs := make(map[string]plumbing.Hash, len(files))
		for i, f := range files {
			names[i], blobs[f.Path] = f.Path, f.Blob
		}
		for _, parts := range render.RecordFiles(names) {
			if parts[0] != first {
				continue
			}
			var joined []byte
			for _, p := range parts {
				data, err := repo.ReadBlob(blobs[p])
				if err != nil {
					return nil, nil, fmt.Errorf("read %s: %w", p, err)
				}
				joined = append(joined, data...)
			}
			entries, err := render.ParseSessionRecord(joined)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", first, err)
			}
			return entries, parts, nil
		}
	}
	return nil, nil, nil
}

// otherBranches is what the other local branches hold that the checked-out one lacks.
type otherBranches struct {
	entries map[string]string        // entry id → the branch that holds it
	commits map[plumbing.Hash]string // commit → the branch that reaches it
}

func readOtherBranches(repo *vcs.Git, current plumbing.ReferenceName, b *branch) (*otherBranches, error) {
	others := &otherBranches{entries: map[string]string{}, commits: map[plumbing.Hash]string{}}
	branches, err := repo.Branches()
	if err != nil {
		return nil, err
	}
	for _, br := range branches {
		if br.Name == current {
			continue
		}
		other, err := readBranch(repo, br.Tip, b.reachable)
		if err != nil {
			return nil, fmt.Errorf("branch %s: %w", br.Name.Short(), err)
		}
		for id := range other.entries {
			if _, seen := others.entries[id]; !seen {
				others.entries[id] = br.Name.Short()
			}
		}
		for h := range other.reachable {
			if _, seen := others.commits[h]; !seen {
				others.commits[h] = br.Name.Short()
			}
		}
	}
	return others, nil
}

// againstJournal checks where the journal says each entry stands against the branch,
// and counts what is pending into r.
func (b *branch) againstJournal(inv *journal.Inventory, others *otherBranches, r *Report) []Problem {
	var problems []Problem
	// Entries committed, says the journal, and on no commit of the branch, by the
	// branch that holds them ("" for none) and session.
	type place struct{ branch, session string }
	lost := map[place][]string{}
	var lostOrder []place
	batchEntries := map[string][]string{}
	for _, e := range inv.Entries {
		commit, committed := b.entries[e.ID]
		switch {
		case e.Pending:
			if e.Event {
				r.PendingEvents++
			} else {
				r.PendingObservations++
			}
			if committed {
				problems = append(problems, Problem{Kind: PendingCommitted, Entries: []string{e.ID}, Message: fmt.Sprintf(
					"entry %s of session %s is pending and already in commit %s: a flush would commit it twice", e.ID, e.Session, short(commit))})
			}
		case e.Batch != "":
			batchEntries[e.Batch] = append(batchEntries[e.Batch], e.ID)
		case !committed && !b.unreadable[e.Session]:
			at := place{others.entries[e.ID], e.Session}
			if lost[at] == nil {
				lostOrder = append(lostOrder, at)
			}
			lost[at] = append(lost[at], e.ID)
		}
	}
	for _, batch := range inv.Batches {
		what := fmt.Sprintf("batch %s of session %s (%d observations, %d events)", batch.ID, batch.Session, batch.Observations, batch.Events)
		commit := plumbing.NewHash(batch.Commit)
		switch {
		case batch.Commit == "":
			if h, found := b.batches[batch.ID]; found {
				problems = append(problems, Problem{Kind: Unfinished, Message: what + " is in commit " + short(h) + " but not marked committed in the journal"})
			} else {
				problems = append(problems, Problem{Kind: Unfinished, Message: what + " was planned by a flush that did not commit it"})
			}
		case b.reachable[commit]:
			problems = append(problems, Problem{Kind: Unfinished, Message: what + " is in commit " + short(commit) + " but was not finished (worktree, index)"})
		case others.commits[commit] != "":
			problems = append(problems, Problem{Kind: OnOtherBranch, Entries: batchEntries[batch.ID], Message: fmt.Sprintf(
				"%s was committed in %s, on branch %s, not on the checked-out branch %s", what, short(commit), others.commits[commit], r.Branch)})
		default:
			problems = append(problems, Problem{Kind: LostCommit, Entries: batchEntries[batch.ID], Message: fmt.Sprintf(
				"%s was committed in %s, which branch %s no longer holds", what, short(commit), r.Branch)})
		}
	}
	for _, at := range lostOrder {
		ids := lost[at]
		if at.branch != "" {
			problems = append(problems, Problem{Kind: OnOtherBranch, Entries: ids, Message: fmt.Sprintf(
				"%s of session %s on branch %s, not on the checked-out branch %s (first: %s)", entriesText(len(ids)), at.session, at.branch, r.Branch, ids[0])})
			continue
		}
		problems = append(problems, Problem{Kind: LostCommit, Entries: ids, Message: fmt.Sprintf(
			"%s of session %s committed, says the journal, but on no commit of branch %s (first: %s)", entriesText(len(ids)), at.session, r.Branch, ids[0])})
	}
	return problems
}

// agmemDirs are the directories of HEAD that agmem writes and verify checks.
var agmemDirs = []string{"current", render.SessionsDir}

// agmemFiles are HEAD's files under agmemDirs, each with its blob's hash.
func agmemFiles(repo *vcs.Git, tip plumbing.Hash) (map[string]plumbing.Hash, error) {
	files := map[string]plumbing.Hash{}
	if tip.IsZero() {
		return files, nil
	}
	root, err := repo.Tree(tip)
	if err != nil {
		return nil, err
	}
	for _, dir := range agmemDirs {
		t, err := root.Tree(dir)
		if errors.Is(err, object.ErrDirectoryNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s at %s: %w", dir, tip, err)
		}
		w := object.NewTreeWalker(t, true, nil)
		for {
			name, e, err := w.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				w.Close()
				return nil, fmt.Errorf("read %s at %s: %w", dir, tip, err)
			}
			if !e.Mode.IsFile() {
				continue
			}
			files[dir+"/"+name] = e.Hash
		}
		w.Close()
	}
	return files, nil
}

// againstHead checks that HEAD holds every file the branch's agmem commits wrote, and
// nothing under agmemDirs that they did not.
func (b *branch) againstHead(files map[string]plumbing.Hash) []Problem {
	var problems []Problem
	explained := make(map[string]bool, len(b.records)+len(b.rendered))
	for p, batch := range b.records {
		explained[p] = true
		if _, ok := files[p]; !ok {
			problems = append(problems, Problem{Kind: MissingFromHead, Path: p,
				Message: fmt.Sprintf("%s, the session record of batch %s, is not in HEAD", p, batch)})
		}
	}
	for _, n := range b.rendered {
		o := &memory.Observation{ID: n.id, ToolName: n.tool, MemoryType: n.typ, Timestamp: n.at}
		found := false
		for _, f := range render.Forms { // a flush put it in one of these places
			p := f.Path(o)
			explained[p] = true
			_, at := files[p]
			found = found || at
		}
		if !found {
			p := render.Forms[0].Path(o)
			problems = append(problems, Problem{Kind: MissingFromHead, Path: p,
				Message: fmt.Sprintf("%s, the markdown of observation %s, is not in HEAD", p, o.ID)})
		}
	}
	for p := range files {
		if !explained[p] {
			problems = append(problems, Problem{Kind: Unexplained, Path: p,
				Message: p + " is in HEAD, but no session record of the branch holds an entry it belongs to"})
		}
	}
	sortByPath(problems)
	return problems
}

// againstWorktree checks that the worktree holds each of HEAD's files as HEAD does.
// A file the index records as HEAD's, with the stat data it has, is not read, as git
// status reads none: reading every file was most of what a check of 150,000 took.
func againstWorktree(repo *vcs.Git, files map[string]plumbing.Hash) []Problem {
	index, err := repo.ReadIndexStat()
	if err == nil {
		defer index.Close()
	}
	var problems []Problem
	for p, want := range files {
		full := filepath.Join(repo.Root, filepath.FromSlash(p))
		fi, err := os.Lstat(full)
		switch {
		case errors.Is(err, os.ErrNotExist):
			problems = append(problems, Problem{Kind: MissingFromWorktree, Path: p, Message: p + " is in HEAD but not in the worktree"})
			continue
		case err != nil:
			problems = append(problems, Problem{Kind: EditedByHand, Path: p, Message: fmt.Sprintf("%s: %v", p, err)})
			continue
		case !fi.Mode().IsRegular():
			problems = append(problems, Problem{Kind: EditedByHand, Path: p, Message: p + " is not a regular file in the worktree"})
			continue
		case index != nil && index.Holds(p, fi, want):
			continue
		}
		data, err := os.ReadFile(full)
		if err != nil {
			problems = append(problems, Problem{Kind: EditedByHand, Path: p, Message: fmt.Sprintf("%s: %v", p, err)})
			continue
		}
		if plumbing.ComputeHash(plumbing.BlobObject, data) != want {
			problems = append(problems, Problem{Kind: EditedByHand, Path: p, Message: p + " in the worktree differs from HEAD (edited by hand?)"})
		}
	}
	sortByPath(problems)
	return problems
}

func sortByPath(problems []Problem) {
	slices.SortFunc(problems, func(a, b Problem) int { return strings.Compare(a.Path, b.Path) })
}

func entriesText(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return strconv.Itoa(n) + " entries"
}

func short(h plumbing.Hash) string { return vcs.Short(h.String()) }
