package recall

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/journal"
	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/render"
	"github.com/agmem/agmem/vcs"
)

// Memory is a memory repo opened for reading back: its search index, brought up to
// date when opened, and where the whole of each entry is (the journal, git).
type Memory struct {
	Index   *Index
	repo    memrepo.Repo
	git     *vcs.Git
	journal *journal.Journal
	behind  bool  // the last update did not bring the index up to date (Lag)
	failed  error // why, when it failed rather than ran out of time

	catchUp  func()    // SetCatchUp's
	caughtUp time.Time // when catchUp was last called
	// triedWrite is when Recheck last opened the index again, as one read as it is is
	// opened again once a minute to be written.
	triedWrite time.Time
}

// catchUpEvery bounds how often a reader left behind starts an update of its own.
const catchUpEvery = time.Minute

// SetCatchUp gives the memory what starts an update that outlives a reader's budget (an
// agmem index in the background), for a reader that lives on (the MCP server, the
// viewer): a Refresh cut short by its budget starts over the next time, and a rebuild
// would never be done. It is called now if the index is behind, and then whenever a
// Refresh leaves it behind, at most once a minute.
func (m *Memory) SetCatchUp(fn func()) {
	m.catchUp = fn
	m.caughtUp = time.Time{}
	m.catchUpIfBehind()
}

func (m *Memory) catchUpIfBehind() {
	if m.behind && m.failed == nil && m.catchUp != nil && time.Since(m.caughtUp) >= catchUpEvery {
		m.caughtUp = time.Now()
		m.catchUp()
	}
}

// Lag is what a reader that answers anyway says first while the index is read as it
// was, short of what git and the journal hold ("" when it is not): the last Open or
// Refresh did not bring it up to date because the update failed (said why), or ran out
// of its time or waited on another update, which may be making the index anew and have
// nothing in it yet. wait says whether asking again later helps, as it does but for a
// failure.
func (m *Memory) Lag() (note string, wait bool) {
	switch {
	case m.failed != nil:
		return "the index could not be brought up to date, so what was done lately may be missing: " + hint.OneLine(m.failed.Error()), false
	case m.behind && m.empty():
		return "the index is being made from the memory's history and holds nothing yet", true
	case m.behind:
		return "the index is still catching up with the memory's history: what was done lately may be missing", true
	}
	return "", false
}

// Open opens repo's memory for reading back, updating its index first, until ctx is
// done: then the index is read as it was.
func Open(ctx context.Context, repo memrepo.Repo) (*Memory, error) {
	return open(ctx, repo, false)
}

// OpenForContext is Open for a context block, which tells nothing of idle events (a
// session's start, what context told it): when the journal recorded only those since
// the index's last update, the index is read as it is, and they are indexed by the next.
// A block searches no words: the segments are not read unless something else asks.
func OpenForContext(ctx context.Context, repo memrepo.Repo) (*Memory, error) {
	return open(ctx, repo, true)
}

func open(ctx context.Context, repo memrepo.Repo, forContext bool) (*Memory, error) {
	git, err := vcs.Open(repo.Root)
	if err != nil {
		return nil, err
	}
	j := repo.Journal()
	ix, _, err := openUpdated(ctx, repo.StateDir(), git, j, forContext, !forContext, false)
	// Past ctx, or while another process holds the index longer than its busy timeout
	// (a rebuild), or the journal longer than the journal's, or when the index's files
	// cannot be written, it answers from the index as it is.
	unwritable := cannotWrite(err)
	if err != nil && ctx.Err() == nil && !inOthersHands(err) && !unwritable {
		if ix != nil {
			ix.Close()
		}
		return nil, err
	}
	if ix == nil {
		return nil, err
	}
	m := &Memory{Index: ix, repo: repo, git: git, journal: j, behind: err != nil}
	if unwritable {
		m.failed = err // said by Lag, and not tried again in the background
	}
	return m, nil
}

// inOthersHands says whether err is another process holding the index (busy) or the
// journal longer than a reader waits, or an index to make anew, which a reader leaves
// to agmem index (errRewritten): the update is left for later, not failed.
func inOthersHands(err error) bool {
	return busy(err) || errors.Is(err, journal.ErrLocked) || errors.Is(err, errRewritten)
}

// Close closes the index.
func (m *Memory) Close() error { return m.Index.Close() }

// Ref is where an entry is: what the index knows of it.
type Ref struct {
	ID      string    `json:"id"`
	Short   string    `json:"short_id"`
	Session string    `json:"session_id"`
	Time    time.Time `json:"timestamp"`
	Event   string    `json:"event,omitempty"` // "" for an observation
	Source  string    `json:"agent,omitempty"`
	Type    string    `json:"memory_type,omitempty"`
	Tool    string    `json:"tool_name,omitempty"`
	Summary string    `json:"summary"`
	Failed  bool      `json:"failed,omitempty"`
	// Tokens is about how many tokens reading the whole entry costs.
	Tokens int    `json:"tokens"`
	Commit string `json:"commit"` // "" while pending
	Path   string `json:"path"`   // its markdown file, "" while pending
	Origin string `json:"origin"` // Local, or the fetched branch it was read from
	record string
	line   int
	md     []byte // the start of its markdown file's blob's hash (mdHashBytes)
	row    int64  // its row in entries
}

// Line is the entry on one line, as agmem search and the MCP server give it: its short
// id, time, agent, memory type and tool (or event), whether it failed, its summary. What
// an agent wrote (a tool's name, an event's) can neither break the line nor drive a
// terminal.
func (r Ref) Line() string {
	what := r.Type + " " + r.Tool
	if r.Event != "" {
		what = "event " + r.Event
	}
	if r.Failed {
		what += " FAILED"
	}
	source := r.Source
	if source == "" {
		source = "-"
	}
	return hint.OneLine(fmt.Sprintf("%s %s %s %s %s", r.Short, r.Time.Format("2006-01-02 15:04"), source, what, r.Summary))
}

// entries reads the whole of each entry refs name, in their order: a pending one from
// the journal, one in git from its commit's session record. One git lookup per record.
func (m *Memory) entries(refs []Ref) ([]memory.Entry, error) {
	out := make([]memory.Entry, len(refs))
	found := make([]bool, len(refs))
	var pending []string
	at := map[string][]int{} // id -> places in refs
	byRecord := map[[2]string][]int{}
	for i, r := range refs {
		at[r.ID] = append(at[r.ID], i)
		if r.Commit == "" {
			pending = append(pending, r.ID)
		} else {
			key := [2]string{r.Commit, r.record}
			byRecord[key] = append(byRecord[key], i)
		}
	}
	if len(pending) > 0 {
		err := m.journal.Entries(pending, func(e memory.Entry) error {
			for _, i := range at[e.ID()] {
				out[i], found[i] = e, true
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	// Each record is read on a CPU of its own (onCPUs): a phrase's hits whose markdown
	// files do not show the match are read from their whole records, a few hundred
	// kilobytes of deltas each, and they made the slowest searches.
	records := slices.Collect(maps.Keys(byRecord))
	errs := make([]error, len(records))
	onCPUs(len(records), func(r int) {
		lines := map[int][]int{}
		last := 0
		for _, i := range byRecord[records[r]] {
			lines[refs[i].line] = append(lines[refs[i].line], i)
			last = max(last, refs[i].line)
		}
		fetched := refs[byRecord[records[r]][0]].Origin != Local
		errs[r] = m.recordLines(plumbing.NewHash(records[r][0]), records[r][1], last, func(n int) bool { return lines[n] != nil }, func(n int, e memory.Entry) {
			if fetched {
				e = fromFetched(e)
			}
			for _, i := range lines[n] {
				if e.ID() == refs[i].ID {
					out[i], found[i] = e, true
				}
			}
		})
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	for i, ok := range found {
		switch {
		case ok:
		case refs[i].Commit == "":
			return nil, hint.With(fmt.Errorf("%s is in the index as pending but not in the journal", refs[i].ID),
				`the journal was moved or made anew since the index read it: "agmem index --rebuild" makes the index anew from git and the journal`)
		default:
			return nil, fmt.Errorf("%s is in the index but neither in the journal nor at %s of commit %.12s: run \"agmem verify\"",
				refs[i].ID, refs[i].record, refs[i].Commit)
		}
	}
	return out, nil
}

// recordLines calls fn with the entries of the session record's lines that want wants,
// up to last, each with its number, reading the record's parts in order as far as that.
func (m *Memory) recordLines(commit plumbing.Hash, first string, last int, want func(n int) bool, fn func(n int, e memory.Entry)) error {
	parts := []string{first}
	names, err := m.git.ListFiles(commit, path.Dir(first))
	if err != nil {
		return err
	}
	for _, p := range render.RecordFiles(names) {
		if p[0] == first {
			parts = p
		}
	}
	readers := make([]io.Reader, 0, len(parts))
	for _, p := range parts {
		rc, err := m.git.OpenFile(commit, p)
		if err != nil {
			return err
		}
		defer rc.Close()
		readers = append(readers, rc)
	}
	br := bufio.NewReaderSize(io.MultiReader(readers...), 64<<10)
	n := 0
	for n < last {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			n++
			if want(n) {
				if e, err := memory.DecodeEntry(line); err == nil && e.Validate() == nil {
					fn(n, e)
				}
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Refresh brings the index up to date, as Open did, until ctx is done: a long-lived
// reader (the MCP server) calls it before each read. An update that fails, rather than
// runs out of time or waits on another, is returned, and kept (Lag): an update of its
// own would fail the same, and is not started.
func (m *Memory) Refresh(ctx context.Context) error {
	if err := m.Recheck(); err != nil {
		m.behind, m.failed = true, err
		return err
	}
	_, err := m.Index.Update(ctx, m.git, m.journal)
	m.behind, m.failed = err != nil, nil
	if err != nil && ctx.Err() == nil && !inOthersHands(err) {
		m.failed = err
	}
	m.catchUpIfBehind()
	return m.failed
}

// Recheck is what a reader that lives on does before it reads git: git reads its packs
// again if they changed, and the memory is opened again if its repo or its index file
// was made anew since it was opened (the repo deleted and initialised again at its
// path, the index removed by another process that found it damaged), whose files
// nothing else would update; an index read as it is, since it could not be written,
// is opened to be written again, once a minute at most. Refresh rechecks first.
func (m *Memory) Recheck() error {
	if m.git.Replaced() {
		git, err := vcs.Open(m.repo.Root)
		if err != nil {
			return err
		}
		m.git, m.journal = git, m.repo.Journal()
	} else {
		m.git.Refresh()
	}
	again := m.Index.unwritable != nil && time.Since(m.triedWrite) >= catchUpEvery
	if !again && !m.Index.replaced() {
		return nil
	}
	m.triedWrite = time.Now()
	ix, err := OpenIndex(m.repo.StateDir())
	if err != nil {
		return err
	}
	m.Index.Close()
	m.Index = ix
	return nil
}

// Git is the memory's git repository, as the last Recheck found it.
func (m *Memory) Git() *vcs.Git { return m.git }

// empty says whether the index holds no entry yet, as one another process makes anew.
func (m *Memory) empty() bool {
	var none bool
	err := m.Index.db.QueryRow(`SELECT NOT EXISTS (SELECT 1 FROM entries)`).Scan(&none)
	return err == nil && none
}
