package recall

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/agmem/agmem/capture"
	"github.com/agmem/agmem/internal/failpoint"
	"github.com/agmem/agmem/internal/fulltext"
	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/jsonscan"
	"github.com/agmem/agmem/internal/tokens"
	"github.com/agmem/agmem/journal"
	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/render"
	"github.com/agmem/agmem/vcs"
)

// writer is one Update's transaction.
type writer struct {
	ctx  context.Context
	ix   *Index
	tx   *sql.Tx
	done Updated
	// statements, prepared once a transaction
	insert, findAt, place, record, session *sql.Stmt
	rewrite                                *sql.Stmt // an entry indexed before that changed since
	sessionRow                             *sql.Stmt // a session's row, made if it has none
	kindRow                                *sql.Stmt // a kind's row, made if it has none
	kinds                                  map[kind]int64
	// sessions tallies what the entries added tell of their sessions, written at the end
	sessions map[string]*sessionTally
	order    []string         // the sessions' ids, as first seen
	rows     map[string]int64 // the sessions' rows, as entries name them
	// words gathers the entries' words for the segment seg, 0 until the first, and
	// inWords says which entries it holds
	words   *segmentWords
	seg     int64
	inWords map[int64]bool
	swept   bool // the segment files no transaction named are removed
	changed bool // a segment written, or an entry's words dead
	// committed holds the JSON of each entry of this repo's commits the update read, as
	// the journal holds an entry (committedJSON), by its hash, while the journal holds
	// entries the index has not read: the journal gives again what a flush committed,
	// and an entry as its commit holds it is passed over without being decoded.
	committed map[[2]uint64]bool
	// added is the row of each entry this update added, by a hash of its id (seeded by
	// seed), and more those of a hash already there: the segments name them once the
	// update is written. A hash, not the id, which a rebuild would keep a million of in
	// memory; a row found by it is of the id, or of another.
	added map[uint64]int64
	more  map[uint64][]int64
	seed  maphash.Seed
	seed2 maphash.Seed // with seed, of committed's hashes
	// Where an entry the update adds may have a row already: in added, and in the
	// segments (segs, read when first needed) unless the index held no entry (empty)
	// or the entry's session had no row (its row is past sessionsBefore) before the
	// update: an entry is of one session, and most updates add sessions' first entries.
	empty          bool
	sessionsBefore int64
	segs           []segment
	segsRead       bool
	ownSegs        bool // segs were opened for the update, not the index's own
}

// shape is what tells one recording of an entry from another of the same id: a call
// reported before its result, then answered.
type shape struct{ failed, size int }

// Each entry's words, by field of the segments, and how much each weighs in a score.
const (
	fieldTool = iota
	fieldSummary
	fieldArguments
	fieldResult
	fieldError
	fieldPaths
	fields
)

var weights = []float64{fieldTool: 4, fieldSummary: 3, fieldArguments: 1, fieldResult: 1, fieldError: 2, fieldPaths: 3}

// The keys a search filters entries on, by position in a segment's keys.
const (
	keySource = iota
	keyType
	keyTool
	keySession
	keyFailed
	keys
)

// segmentBytes bounds the memory of the words an update gathers before it writes a
// segment of them: a rebuild writes several.
const segmentBytes = 256 << 20

func (ix *Index) writer(ctx context.Context) (*writer, error) {
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("search index: %w", err)
	}
	w := &writer{ctx: ctx, ix: ix, tx: tx, sessions: map[string]*sessionTally{}, rows: map[string]int64{}, kinds: map[kind]int64{}}
	for _, s := range []struct {
		stmt **sql.Stmt
		sql  string
	}{
		{&w.insert, `INSERT INTO entries (id, event, session, kind, ts, failed,
			summary, subject, size, record, line, form, md) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`},
		{&w.findAt, `SELECT rowid, record, failed, size FROM entries WHERE rowid = ? AND id = ?`},
		{&w.rewrite, `UPDATE entries SET kind = ?, failed = ?, summary = ?, subject = ?, size = ? WHERE rowid = ?`},
		{&w.place, `UPDATE entries SET record = ?, line = ?, form = ?, md = ? WHERE rowid = ?`},
		{&w.record, `INSERT INTO records (commit_, path, origin) VALUES (?,?,?)
			ON CONFLICT (commit_, path) DO UPDATE SET origin = origin RETURNING rowid`},
		{&w.kindRow, `INSERT INTO kinds (source, type, tool) VALUES (?,?,?)
			ON CONFLICT (source, type, tool) DO UPDATE SET tool = tool RETURNING rowid`},
		{&w.sessionRow, `INSERT INTO sessions (id, source, first, last, cwd, first_prompt, prompt_at, observations, failures, origin)
			VALUES (?, '', 0, 0, '', '', 0, 0, 0, '') ON CONFLICT (id) DO UPDATE SET id = id RETURNING rowid`},
		// A session's row is made, empty, before its first entry's (sessionRow): what is
		// empty, or 0, is what no update told yet.
		{&w.session, `INSERT INTO sessions (id, source, first, last, cwd, first_prompt, prompt_at, observations, failures, origin)
			VALUES (?,?,?,?,?,?,?,?,?,?)
			ON CONFLICT (id) DO UPDATE SET
				source = CASE WHEN source = '' THEN excluded.source ELSE source END,
				origin = CASE WHEN origin = '' THEN excluded.origin ELSE origin END,
				first = CASE WHEN first = 0 OR excluded.first = 0 THEN max(first, excluded.first) ELSE min(first, excluded.first) END,
				last = max(last, excluded.last),
				cwd = CASE WHEN cwd = '' THEN excluded.cwd ELSE cwd END,
				first_prompt = CASE WHEN excluded.first_prompt <> '' AND (first_prompt = '' OR excluded.prompt_at < prompt_at)
					THEN excluded.first_prompt ELSE first_prompt END,
				prompt_at = CASE WHEN excluded.first_prompt <> '' AND (first_prompt = '' OR excluded.prompt_at < prompt_at)
					THEN excluded.prompt_at ELSE prompt_at END,
				observations = observations + excluded.observations,
				failures = failures + excluded.failures`},
	} {
		if *s.stmt, err = tx.Prepare(s.sql); err != nil {
			tx.Rollback()
			return nil, fmt.Errorf("search index: %w", err)
		}
	}
	w.added, w.more, w.seed = map[uint64]int64{}, map[uint64][]int64{}, maphash.MakeSeed()
	if err := tx.QueryRow(`SELECT NOT EXISTS (SELECT 1 FROM entries), coalesce((SELECT max(rowid) FROM sessions), 0)`).
		Scan(&w.empty, &w.sessionsBefore); err != nil {
		tx.Rollback()
		return nil, fmt.Errorf("search index: %w", err)
	}
	return w, nil
}

// indexed is what the index holds of an entry it indexed before.
type indexed struct {
	rowid, record int64
	failed, size  int
}

// indexedAs is the entry id, of the session whose row is session, as the index holds
// it; ok is false where it holds none.
func (w *writer) indexedAs(id string, session int64) (in indexed, ok bool, err error) {
	// Not found at its row: another id's of the same hash, or one added pending and
	// dropped since; the segments say.
	h := maphash.String(w.seed, id)
	var rows []int64
	if at, added := w.added[h]; added {
		rows = append([]int64{at}, w.more[h]...)
	}
	if !w.empty && session <= w.sessionsBefore {
		if err := w.loadSegments(); err != nil {
			return in, false, err
		}
		before, err := named(w.segs, wholeName(id))
		if err != nil {
			return in, false, err
		}
		rows = append(rows, before...)
	}
	for _, at := range rows {
		if in, ok, err = scanIndexed(w.findAt.QueryRow(at, id)); ok || err != nil {
			return in, ok, err
		}
	}
	return in, false, nil
}

// loadSegments reads the segments as the update's transaction names them: the index's
// own where they are those it loaded.
func (w *writer) loadSegments() error {
	if w.segsRead {
		return nil
	}
	gen, err := segmentsGen(w.tx)
	if err != nil {
		return err
	}
	if gen == w.ix.gen && w.ix.segs != nil {
		w.segs, w.segsRead = w.ix.segs, true
		return nil
	}
	segs, err := openSegments(w.tx, w.ix.dir)
	if err != nil {
		return err
	}
	w.segs, w.segsRead, w.ownSegs = segs, true, true
	return nil
}

// scanIndexed reads an entry's row, which row may not have.
func scanIndexed(row *sql.Row) (in indexed, ok bool, err error) {
	switch err := row.Scan(&in.rowid, &in.record, &in.failed, &in.size); {
	case errors.Is(err, sql.ErrNoRows):
		return in, false, nil
	case err != nil:
		return in, false, err
	}
	return in, true, nil
}

// sessionTally is what the entries one update added tell of their session, merged with
// what the index knew as the sessions statement says.
type sessionTally struct {
	source, cwd, prompt, origin string
	first, last, promptAt       int64
	observations, failures      int
	dirs                        []string // every cwd its entries name, once
}

// add tallies an entry of the session at time at (0: one that tells no time of it).
func (t *sessionTally) add(source, cwd, prompt, origin string, at int64, observations, failures int) {
	if t.source == "" {
		t.source = source
	}
	if t.cwd == "" {
		t.cwd = cwd
	}
	if !slices.Contains(t.dirs, cwd) { // "" too: the root's filter holds it, as it held the first cwd
		t.dirs = append(t.dirs, cwd)
	}
	if t.origin == "" {
		t.origin = origin
	}
	if at != 0 && (t.first == 0 || at < t.first) {
		t.first = at
	}
	t.last = max(t.last, at)
	if prompt != "" && (t.prompt == "" || at < t.promptAt) {
		t.prompt, t.promptAt = prompt, at
	}
	t.observations += observations
	t.failures += failures
}

// writeSessions writes the sessions' tallies, and the directories they worked in.
func (w *writer) writeSessions() error {
	for _, id := range w.order {
		t := w.sessions[id]
		if _, err := w.session.Exec(id, t.source, t.first, t.last, t.cwd, t.prompt, t.promptAt, t.observations, t.failures, t.origin); err != nil {
			return err
		}
		if len(t.dirs) == 0 {
			continue
		}
		row, err := w.sessionOf(id)
		if err != nil {
			return err
		}
		for _, dir := range t.dirs {
			if _, err := w.tx.Exec(`INSERT OR IGNORE INTO dirs (cwd, session) VALUES (?, ?)`, dir, row); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *writer) commit() error {
	if w.words != nil {
		if err := w.writeSegment(); err != nil {
			return err
		}
	}
	if w.changed {
		if err := changedSegments(w.tx); err != nil {
			return err
		}
	}
	if err := w.writeSessions(); err != nil {
		return err
	}
	return w.tx.Commit()
}

// name names an entry's row in the segment the update writes (shortName, wholeName).
func (w *writer) name(rowid int64, id string) error {
	if err := w.segment(); err != nil {
		return err
	}
	short, whole := shortName(id), wholeName(id)
	w.words.name(short, rowid)
	if whole != short {
		w.words.name(whole, rowid)
	}
	return nil
}

// index gathers an entry's words, in the segment the update writes.
func (w *writer) index(rowid int64, e memory.Entry, r row) error {
	if err := w.segment(); err != nil {
		return err
	}
	failed := "0"
	if r.failed != 0 {
		failed = "1"
	}
	w.inWords[rowid] = true
	w.words.add(fulltext.Doc{ID: rowid, Time: e.Time().UnixNano(),
		Fields: []string{fieldTool: r.tool, fieldSummary: r.words, fieldArguments: r.arguments, fieldResult: r.result,
			fieldError: r.error, fieldPaths: r.paths},
		Keys: []string{keySource: e.Source(), keyType: r.memoryType, keyTool: r.tool, keySession: e.Session(), keyFailed: failed}})
	if w.words.about() > segmentBytes {
		return w.writeSegment()
	}
	return nil
}

// segment begins a segment, unless the update is writing one: its row, which takes
// the index's write lock, and its words. The first time, it removes what updates that
// failed left: segment files no row names, which no other update can be writing now.
func (w *writer) segment() error {
	if w.seg != 0 {
		return nil
	}
	res, err := w.tx.Exec(`INSERT INTO segments (docs) VALUES (0)`)
	if err != nil {
		return err
	}
	if w.seg, err = res.LastInsertId(); err != nil {
		return err
	}
	w.words, w.inWords = newSegmentWords(), map[int64]bool{}
	if w.swept {
		return nil
	}
	w.swept = true
	return sweepSegments(w.tx, w.ix.dir)
}

// endWords waits for the words given to be gathered, and returns them.
func (w *writer) endWords() *fulltext.Builder {
	words := w.words
	w.words = nil // ended, even when finish raises the goroutine's panic
	return words.finish()
}

// writeSegment writes the words gathered as the segment's file, synced before the
// transaction that names it commits; none gathered, no file.
func (w *writer) writeSegment() error {
	b := w.endWords()
	if b.Len() == 0 && b.Names() == 0 { // begun, and given nothing
		w.seg = 0
		return nil
	}
	if err := os.MkdirAll(w.ix.dir, 0o755); err != nil {
		return fulltext.PathDamaged(err) // the segments' directory a file
	}
	if err := b.Write(segmentPath(w.ix.dir, w.seg)); err != nil {
		return err
	}
	if _, err := w.tx.Exec(`UPDATE segments SET docs = ? WHERE id = ?`, max(b.Len(), 1), w.seg); err != nil {
		return err
	}
	w.seg, w.inWords, w.changed = 0, nil, true
	return nil
}

// sweepSegments removes the files of dir that are not segments the index names, as q
// reads it under the write lock.
func sweepSegments(q querier, dir string) error {
	ids, err := segmentIDs(q)
	if err != nil {
		return err
	}
	named := map[string]bool{}
	for _, id := range ids {
		named[filepath.Base(segmentPath(dir, id))] = true
	}
	files, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fulltext.PathDamaged(err) // the segments' directory a file
	}
	for _, f := range files {
		if !named[f.Name()] {
			if err := os.Remove(filepath.Join(dir, f.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// rollback ends the transaction, if commit did not, and lets go of what it read.
func (w *writer) rollback() {
	defer func() { // whatever the words' goroutine raised
		w.tx.Rollback()
		if w.ownSegs {
			for _, s := range w.segs {
				s.Close()
			}
		}
	}()
	if w.words != nil {
		w.endWords()
	}
}

// metaReader is the index's database or a transaction of it.
type metaReader interface {
	QueryRow(query string, args ...any) *sql.Row
}

// readMeta is the index's meta value of key, "" for none.
func readMeta(q metaReader, key string) (string, error) {
	var v string
	err := q.QueryRow(`SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

// journalRead is how far the index has read the journal, as its meta says: the
// journal's birth and the last entry read; ok is false before the first read.
func journalRead(q metaReader) (birth string, seq uint64, ok bool, err error) {
	if birth, err = readMeta(q, "journal_birth"); err != nil {
		return "", 0, false, err
	}
	after, err := readMeta(q, "journal_seq")
	if err != nil {
		return "", 0, false, err
	}
	seq, err = strconv.ParseUint(after, 10, 64)
	return birth, seq, err == nil, nil
}

func (w *writer) setMeta(key, value string) error {
	_, err := w.tx.Exec(`INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	return err
}

// place is where git holds an entry; the zero place is the journal's, pending.
type place struct {
	record int64 // its record's row; 0 while pending
	line   int
	form   int    // its markdown file's name
	md     []byte // its markdown file's blob, nil for none
	origin string
}

// journal indexes the entries the journal recorded since the last update, as pending:
// one git holds was indexed there just before, or is placed when its commit is.
func (w *writer) journal(j *journal.Journal) error {
	read, seq, _, err := journalRead(w.tx)
	if err != nil {
		return err
	}
	birth, err := j.Birth()
	if err != nil {
		return err
	}
	add := func(e memory.Entry) error { return w.add(e, place{origin: Local}) }
	var known func(entryJSON []byte) bool // nil: none to pass over, nor to decompress twice
	if len(w.committed) > 0 {
		known = w.isCommitted
	}
	last := uint64(0)
	if birth == read {
		if last, err = j.SinceUnknown(seq, known, add); err != nil {
			return err
		}
	}
	if birth != read || last < seq {
		// A journal made anew (the old one moved aside): what it held pending is gone.
		if err := w.dropPending(); err != nil {
			return err
		}
		if last, err = j.Since(0, add); err != nil {
			return err
		}
	}
	if err := w.setMeta("journal_birth", birth); err != nil {
		return err
	}
	return w.setMeta("journal_seq", strconv.FormatUint(last, 10))
}

// errStopped ends a read that the update no longer wants.
var errStopped = errors.New("the update stopped")

// readsJournalAfter makes the writer keep what it reads of the commits for the journal's
// pass when the journal holds entries the index has not read; not in a rebuild, whose
// rows added are found without a search already.
func (w *writer) readsJournalAfter(j *journal.Journal) error {
	if w.empty {
		return nil
	}
	birth, last, err := j.Tip()
	if err != nil {
		return err
	}
	read, seq, _, err := journalRead(w.tx)
	if err != nil {
		return err
	}
	if birth != read || last > seq {
		w.committed, w.seed2 = map[[2]uint64]bool{}, maphash.MakeSeed()
	}
	return nil
}

// dropPending forgets every entry no commit holds: its words are dead in every segment,
// and its session counts it no more. The directories its session worked in (dirs) keep
// those it named: entries keep no cwd to tell them again by, and a journal made anew
// (the only way here) is rare.
func (w *writer) dropPending() error {
	if _, err := w.tx.Exec(`INSERT OR IGNORE INTO dead (entry, before) SELECT rowid, ? FROM entries WHERE record = 0`, int64(math.MaxInt64)); err != nil {
		return err
	}
	if _, err := w.tx.Exec(`UPDATE sessions SET
		observations = observations - (SELECT count(*) FROM entries e WHERE e.session = sessions.rowid AND e.record = 0 AND e.event = ''),
		failures = failures - (SELECT count(*) FROM entries e WHERE e.session = sessions.rowid AND e.record = 0 AND e.event = '' AND e.failed <> 0),
		changes = changes + 1
		WHERE rowid IN (SELECT session FROM entries WHERE record = 0)`); err != nil {
		return err
	}
	w.changed = true
	_, err := w.tx.Exec(`DELETE FROM entries WHERE record = 0`)
	return err
}

// git indexes every commit not indexed yet of this repo's branch and of each fetched
// agents/* branch, a branch's own commits first.
func (w *writer) git(git *vcs.Git) error {
	srcs, err := sources(git)
	if err != nil {
		return err
	}
	if err := w.forgetRewritten(git, srcs); err != nil {
		return err
	}
	for _, s := range srcs {
		if s.tip.IsZero() {
			continue
		}
		commits, err := w.unindexed(git, s.tip)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		if err := w.indexCommits(git, commits, s.name); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return w.setMeta(metaTips, tipsOf(srcs))
}

// metaTips is the meta key of the tips of the branches the index read at its last
// update (tipsOf).
const metaTips = "tips"

// tipsOf is the branches' tips as metaTips keeps them: a line of each, its name and
// its tip (git refuses a space in a branch's name).
func tipsOf(srcs []source) string {
	var b strings.Builder
	for _, s := range srcs {
		fmt.Fprintf(&b, "%s %s\n", s.name, s.tip)
	}
	return b.String()
}

// forgetRewritten empties the index, for the update to index all that git holds anew,
// when a branch it read is gone or its history no longer holds the tip it read
// (amended, rebased, reset, force-pushed, deleted): what only the old commits held
// must be found no more, nor cited. That is rare; an update that reads a branch moved
// on reads the commit it read last, and finds it there at once.
func (w *writer) forgetRewritten(git *vcs.Git, srcs []source) error {
	before, err := readMeta(w.tx, metaTips)
	if err != nil || before == "" || before == tipsOf(srcs) {
		return err
	}
	now := map[string]plumbing.Hash{}
	for _, s := range srcs {
		now[s.name] = s.tip
	}
	for _, line := range strings.Split(strings.TrimSuffix(before, "\n"), "\n") {
		name, hash, _ := strings.Cut(line, " ")
		read, tip := plumbing.NewHash(hash), now[name]
		if _, ok := now[name]; ok && (read.IsZero() || tip == read) {
			continue
		}
		if !tip.IsZero() {
			switch holds, err := git.Holds(w.ctx, tip, read); {
			case err != nil:
				return err
			case holds:
				continue
			}
		}
		if _, bounded := w.ctx.Deadline(); bounded {
			return errRewritten
		}
		return w.forgetAll()
	}
	return nil
}

// errRewritten is the error of an update with a deadline (a reader's) that found a
// branch rewritten: making the index anew is left to an update with none, agmem index
// in the background, a flush's or a pull's, and the reader reads the index as it is.
var errRewritten = errors.New("a branch the index read was rewritten or is gone: the index is being made anew")

// forgetAll empties the index in the update's transaction: every entry, session,
// commit, record, kept block and segment, and how far the journal was read. The
// segments' files stay until the next update sweeps them, since this one may yet be
// rolled back.
func (w *writer) forgetAll() error {
	for _, table := range []string{"entries", "sessions", "dirs", "commits", "records", "contexts", "lines", "segments", "dead"} {
		if _, err := w.tx.Exec("DELETE FROM " + table); err != nil {
			return err
		}
	}
	if _, err := w.tx.Exec(`DELETE FROM meta WHERE key IN ('journal_birth', 'journal_seq')`); err != nil {
		return err
	}
	w.empty, w.sessionsBefore, w.swept, w.changed = true, 0, true, true
	w.committed = nil // the journal is read whole again: nothing to pass over
	clear(w.rows)
	clear(w.added)
	clear(w.more)
	return nil
}

// indexCommits indexes the entries of commits, in order. What git holds of a commit is
// read and decoded on a goroutine of its own, a few parts ahead of the one indexed: a
// rebuild's reading and its indexing then take a core each, and so do the reading of a
// flush's big record and the indexing of its first entries.
func (w *writer) indexCommits(git *vcs.Git, commits []walked, origin string) error {
	reads := make(chan commitRead, 4)
	quit := make(chan struct{})
	defer close(quit)
	go func() {
		defer close(reads)
		send := func(r commitRead) bool {
			select {
			case reads <- r:
				return r.err == nil
			case <-quit:
				return false
			}
		}
		for _, c := range commits {
			if !readCommit(w.ctx, git, c, origin, send) {
				return
			}
		}
	}()
	for r := range reads {
		if r.err == nil {
			r.err = w.addCommit(r)
		}
		if r.err != nil {
			return fmt.Errorf("commit %s: %w", r.commit, r.err)
		}
	}
	return nil
}

// commitRead is a part of what an agmem commit's session records hold, decoded, and
// where each entry's markdown file is.
type commitRead struct {
	commit plumbing.Hash
	origin string
	first  bool        // the commit's first part, or its whole
	record *recordRead // nil for none
	err    error
}

// readPart bounds the entries of a part of a commit read (readCommit).
const readPart = 256

type recordRead struct {
	path    string // its first part
	entries []memory.Entry
	lines   [][]byte // the record's line of each entry
	rows    []row
	places  []place // but the record's row, known once it is written
}

// readCommit reads the entries of an agmem commit's session records, and gives them to
// send a part of at most readPart entries at a time, or the commit with none (a
// person's); send says whether to go on, and so does readCommit. A record of a fetched
// branch that does not read as entries, which anyone could have written, is passed
// over whole; one of this repo's own is an error.
func readCommit(ctx context.Context, git *vcs.Git, c walked, origin string, send func(commitRead) bool) bool {
	read := commitRead{commit: c.hash, origin: origin, first: true}
	fail := func(err error) bool {
		read.record, read.err = nil, err
		send(read)
		return false
	}
	if c.batch == "" {
		return send(read) // a person's commit
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	files, err := git.AddedPaths(c.hash, isRecordPart)
	if err != nil {
		return fail(err)
	}
	data := map[string][]byte{}
	markdown := map[string]plumbing.Hash{}
	var names []string
	for _, f := range files {
		switch {
		case isRecordPart(f.Path):
			data[f.Path] = f.Data
			names = append(names, f.Path)
		case strings.HasSuffix(f.Path, ".md"):
			markdown[f.Path] = f.Hash
		}
	}
	for _, parts := range render.RecordFiles(names) {
		whole := data[parts[0]]
		if len(parts) > 1 {
			var b bytes.Buffer
			for _, p := range parts {
				b.Write(data[p])
			}
			whole = b.Bytes()
		}
		// A record of this repo's is sent a part at a time as it is parsed, so that its
		// first entries are indexed while the rest is: parsing a flush's record of 1,000
		// whole first was a sixth of the update after it. A fetched one is sent once it
		// all reads, since one that does not is passed over whole.
		hold := origin != Local
		part := &recordRead{path: parts[0]}
		sent := 0 // entries of the record sent
		sendPart := func() bool {
			read.record = part.placed(sent, origin, markdown)
			sent, part = sent+len(part.entries), &recordRead{path: parts[0]}
			ok := send(read)
			read.first = false
			return ok
		}
		err := render.EachRecordEntry(whole, func(e memory.Entry, line []byte) error {
			if hold {
				if !filedAsItsSession(parts[0], e.Session()) {
					return nil // replay would not find it there: nor does search
				}
				e = fromFetched(e)
			}
			part.entries, part.lines = append(part.entries, e), append(part.lines, line)
			if !hold && len(part.entries) == readPart && !sendPart() {
				return errStopped
			}
			return nil
		})
		switch {
		case errors.Is(err, errStopped):
			return false
		case err != nil && hold:
			continue
		case err != nil:
			return fail(fmt.Errorf("%s: %w", parts[0], err))
		}
		for rest := part; len(rest.entries) > 0; {
			n := min(readPart, len(rest.entries))
			part = &recordRead{path: rest.path, entries: rest.entries[:n], lines: rest.lines[:n]}
			if !sendPart() {
				return false
			}
			rest.entries, rest.lines = rest.entries[n:], rest.lines[n:]
		}
	}
	if read.first { // no record read: the commit counts all the same
		return send(read)
	}
	return true
}

// placed is the part of a record's entries read, as the writer takes them: each with
// its row and where it is, the first the record's entry start+1 (blank lines aside).
func (rec *recordRead) placed(start int, origin string, markdown map[string]plumbing.Hash) *recordRead {
	rec.rows, rec.places = make([]row, len(rec.entries)), make([]place, len(rec.entries))
	for i, e := range rec.entries {
		rec.rows[i] = rowOf(e)
		at := place{line: start + i + 1, origin: origin}
		if o := e.Observation; o != nil {
			for i, f := range render.Forms {
				if h, ok := markdown[f.Path(o)]; ok {
					at.form, at.md = i+1, h[:]
					break
				}
			}
		}
		rec.places[i] = at
	}
	return rec
}

// addCommit indexes what readCommit read of a commit.
func (w *writer) addCommit(read commitRead) error {
	if read.first {
		w.done.Commits++
	}
	failpoint.Hit("index-midway") // inside the transaction: SQLite must drop it whole
	if rec := read.record; rec != nil {
		var record int64
		if err := w.record.QueryRow(read.commit.String(), rec.path, read.origin).Scan(&record); err != nil {
			return err
		}
		for i, e := range rec.entries {
			at := rec.places[i]
			at.record = record
			if err := w.addRow(e, rec.rows[i], at); err != nil {
				return err
			}
			if w.committed != nil && read.origin == Local {
				w.committed[w.jsonHash(committedJSON(rec.lines[i]))] = true
			}
		}
	}
	return nil
}

// committedJSON is an entry's JSON as the journal holds it, json.Marshal's, from its
// record's line, which leaves HTML's characters unescaped in its strings (SessionRecord):
// elsewhere the two are the same bytes.
func committedJSON(line []byte) []byte {
	if bytes.ContainsAny(line, "<>&") {
		return jsonscan.AppendHTMLEscape(nil, line)
	}
	return line
}

// jsonHash is a hash of an entry's JSON, of 128 bits, so that an entry is not passed
// over for another by a chance meeting of their hashes.
func (w *writer) jsonHash(b []byte) [2]uint64 {
	return [2]uint64{maphash.Bytes(w.seed, b), maphash.Bytes(w.seed2, b)}
}

// isCommitted says whether an entry's JSON, as the journal holds it, is that of an entry
// of a commit the update read.
func (w *writer) isCommitted(entryJSON []byte) bool { return w.committed[w.jsonHash(entryJSON)] }

// walked is a commit of a branch to index: an agmem commit names its batch.
type walked struct {
	hash  plumbing.Hash
	batch string
}

// unindexed are the commits reachable from tip that no update indexed, oldest first,
// each marked indexed in this transaction.
func (w *writer) unindexed(git *vcs.Git, tip plumbing.Hash) ([]walked, error) {
	// A tip indexed before costs no read of git: go-git's first read of an object in a
	// year's pack costs half a second.
	var known int
	switch err := w.tx.QueryRow(`SELECT 1 FROM commits WHERE hash = ?`, tip.String()).Scan(&known); {
	case err == nil:
		return nil, nil
	case !errors.Is(err, sql.ErrNoRows):
		return nil, err
	}
	var out []walked
	err := git.WalkBatches(tip, func(h plumbing.Hash, batch string) (bool, error) {
		if err := w.ctx.Err(); err != nil {
			return false, err
		}
		res, err := w.tx.Exec(`INSERT INTO commits (hash) VALUES (?) ON CONFLICT DO NOTHING`, h.String())
		if err != nil {
			return false, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return false, nil // indexed before, and so is all that leads to it
		}
		out = append(out, walked{h, batch})
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	slices.Reverse(out)
	return out, nil
}

func isRecordPart(path string) bool {
	return strings.HasPrefix(path, render.SessionsDir+"/") && strings.HasSuffix(path, ".jsonl")
}

// add indexes an entry at its place. An entry indexed before keeps its row; one that
// was pending is placed in the commit that now holds it; one that changed since (a call
// reported before its result, then answered: the journal gives it again) is indexed
// again in its row.
func (w *writer) add(e memory.Entry, at place) error { return w.addRow(e, rowOf(e), at) }

// addRow is add of an entry whose row is read already.
func (w *writer) addRow(e memory.Entry, r row, at place) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	session, err := w.sessionOf(e.Session())
	if err != nil {
		return err
	}
	switch before, ok, err := w.indexedAs(e.ID(), session); {
	case err != nil:
		return err
	case ok:
		if before.record != 0 && at.record != 0 && at.record != before.record {
			// Committed again elsewhere: this repo's branch fetched back, or another
			// branch's copy (anyone may push one). The entry read first stays whole,
			// so that its words, summary, text and commit are of one version.
			return nil
		}
		if before.record == 0 && at.record != 0 {
			if _, err := w.place.Exec(at.record, at.line, at.form, storedMD(at.md), before.rowid); err != nil {
				return err
			}
		}
		if r.event != "" || before.failed == r.failed && before.size == r.size {
			return nil
		}
		return w.reindex(e, r, before.rowid, r.failed-before.failed)
	}
	kind, err := w.kindOf(kind{e.Source(), r.memoryType, r.tool})
	if err != nil {
		return err
	}
	res, err := w.insert.Exec(e.ID(), r.event, session, kind, e.Time().UnixNano(), r.failed, r.summary,
		storedSubject(r.summary, r.subject), r.size, at.record, at.line, at.form, storedMD(at.md))
	if err != nil {
		return err
	}
	rowid, err := res.LastInsertId()
	if err != nil {
		return err
	}
	if h := maphash.String(w.seed, e.ID()); w.added[h] == 0 {
		w.added[h] = rowid
	} else {
		w.more[h] = append(w.more[h], rowid)
	}
	if err := w.name(rowid, e.ID()); err != nil {
		return err
	}
	if r.searchable {
		if err := w.index(rowid, e, r); err != nil {
			return err
		}
	}
	prompt := ""
	if r.event == "UserPromptSubmit" {
		prompt = r.summary
	}
	obs, failures := 0, 0
	if r.event == "" {
		obs, failures = 1, r.failed
	}
	when := e.Time().UnixNano()
	if r.event == memory.ContextGiven {
		when = 0 // agmem's own: what it told the agent is no work of the session's
	}
	w.tally(e.Session()).add(e.Source(), r.cwd, prompt, at.origin, when, obs, failures)
	w.done.Entries++
	return nil
}

// reindex indexes anew an observation in the row it had, which the session's failures
// change by failed.
func (w *writer) reindex(e memory.Entry, r row, rowid int64, failed int) error {
	kind, err := w.kindOf(kind{e.Source(), r.memoryType, r.tool})
	if err != nil {
		return err
	}
	if _, err := w.rewrite.Exec(kind, r.failed, r.summary, storedSubject(r.summary, r.subject), r.size, rowid); err != nil {
		return err
	}
	if _, err := w.tx.Exec(`UPDATE sessions SET changes = changes + 1 WHERE rowid = (SELECT session FROM entries WHERE rowid = ?)`, rowid); err != nil {
		return err
	}
	// Its words already in this segment are dead only once in a segment before the next.
	if w.inWords[rowid] {
		if err := w.writeSegment(); err != nil {
			return err
		}
	}
	if err := w.segment(); err != nil {
		return err
	}
	// Its words before, in the segments before this update's, are dead.
	if _, err := w.tx.Exec(`INSERT OR IGNORE INTO dead (entry, before) VALUES (?, ?)`, rowid, w.seg); err != nil {
		return err
	}
	w.changed = true
	if err := w.index(rowid, e, r); err != nil {
		return err
	}
	w.tally(e.Session()).add(e.Source(), r.cwd, "", "", e.Time().UnixNano(), 0, failed)
	return nil
}

// sessionOf is the row of session, made if it has none.
func (w *writer) sessionOf(session string) (int64, error) {
	if row, ok := w.rows[session]; ok {
		return row, nil
	}
	var row int64
	if err := w.sessionRow.QueryRow(session).Scan(&row); err != nil {
		return 0, err
	}
	w.rows[session] = row
	return row, nil
}

// kind is an entry's agent, memory type and tool (an event's name): a row of kinds.
type kind struct{ source, memoryType, tool string }

// kindOf is the row of k, made if it has none.
func (w *writer) kindOf(k kind) (int64, error) {
	if row, ok := w.kinds[k]; ok {
		return row, nil
	}
	var row int64
	if err := w.kindRow.QueryRow(k.source, k.memoryType, k.tool).Scan(&row); err != nil {
		return 0, err
	}
	w.kinds[k] = row
	return row, nil
}

// tally is what the update tells of a session.
func (w *writer) tally(session string) *sessionTally {
	t := w.sessions[session]
	if t == nil {
		t = &sessionTally{}
		w.sessions[session], w.order = t, append(w.order, session)
	}
	return t
}

// row is what the index holds of an entry, and the text its words come from.
type row struct {
	event, memoryType, tool, cwd, summary, subject string
	failed, size                                   int
	searchable                                     bool
	// the text of the words table's columns; words is its summary column's
	words, arguments, result, error, paths string
}

// maxSummary bounds the summary kept of an entry (a prompt's is its text).
const maxSummary = 200

func rowOf(e memory.Entry) row {
	if o := e.Observation; o != nil {
		r := row{memoryType: string(o.MemoryType), tool: o.ToolName, cwd: workDir(o.Cwd), summary: o.Summary,
			searchable: true, words: o.Summary, arguments: readable(o.Arguments), result: readable(o.Result), error: o.Error,
			paths: capture.FilePath(o.Arguments)}
		command := capture.Command(o.Arguments)
		if files := capture.PatchFiles(command); r.paths == "" && files != nil {
			// Codex edits with a patch: its files are what it names.
			r.paths, command = strings.Join(files, "\n"), ""
		}
		r.subject = r.paths
		if r.subject == "" {
			r.subject = oneLine(command, maxSummary)
		}
		s := shapeOf(e)
		r.failed, r.size = s.failed, s.size
		return r
	}
	v := e.Event
	r := row{event: v.Name, tool: v.Name, cwd: workDir(v.Attrs["cwd"]), summary: oneLine(v.Text, maxSummary),
		size: shapeOf(e).size}
	if v.Name == "UserPromptSubmit" {
		r.searchable, r.words = true, v.Text // once: its summary is the start of it
	}
	return r
}

// workDir is a working directory as the index keeps it, as projectDir names one: an
// absolute path cleaned ("/p//app/./" is "/p/app"); any other (a Windows one) as given.
func workDir(cwd string) string {
	if !strings.HasPrefix(cwd, "/") {
		return cwd
	}
	return path.Clean(cwd)
}

// readable is a JSON value as a reader sees it, whose words are words: a string
// unquoted, any other value's text with the escapes in its strings written as their
// characters (jsonscan.AppendText), so that "ok\nwalrus" and "\u003cWelcome" hold the
// words walrus and welcome, not nwalrus and u003cwelcome.
func readable(raw json.RawMessage) string {
	text := memory.JSONText(raw)
	if len(raw) > 0 && raw[0] != '"' && strings.IndexByte(text, '\\') >= 0 {
		return string(jsonscan.AppendText(nil, raw))
	}
	return text
}

// shapeOf is an entry's shape, without decoding its text as rowOf does: whether it
// failed, and about how many tokens reading it whole costs, as the MCP server counts
// them (tokens.Count), its head's too.
func shapeOf(e memory.Entry) shape {
	if o := e.Observation; o != nil {
		failed := 0
		if o.Error != "" {
			failed = 1
		}
		return shape{failed, tokens.Count(o.Arguments) + tokens.Count(o.Result) + tokens.Count(o.Error) +
			tokens.Count(o.Summary) + tokens.Count(o.ToolName) + headTokens}
	}
	return shape{0, tokens.Count(e.Event.Text) + headTokens}
}

// headTokens is about what the head of an entry whole costs: its line, ids, time,
// commit and path.
const headTokens = 60

// oneLine is text on one line, safe for a terminal (hint.OneLine), cut to n runes.
func oneLine(text string, n int) string {
	s := hint.OneLine(text)
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}

// shortID is the id as file names carry it (memory.ShortID), lower case.
func shortID(id string) string { return strings.ToLower(memory.ShortID(id)) }
