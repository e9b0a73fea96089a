package recall

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "modernc.org/sqlite" // the entries' table: SQLite, in pure Go
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/agmem/agmem/internal/fulltext"
	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/journal"
	"github.com/agmem/agmem/sessionstart/kept"
	"github.com/agmem/agmem/vcs"
)

// The search index is derived, never the truth: .agmem/index.db, a SQLite file of what
// each entry is and where (its session, tool, time, commit, record), and the segment
// files of agmem's full-text engine in .agmem/search/, which hold the entries' words.
// Update fills them from what git holds (this repo's branch and every fetched
// agents/* branch) and what the journal holds that no commit does yet. Deleting them
// loses nothing: the next Open makes them anew, and Update fills them again.
//
// Why an engine of agmem's own for the words (internal/fulltext, BENCHMARKS.md): SQLite's
// FTS5, which held them before, took half a second and more to rank a common word over a
// year of memory; bleve built four times slower into twice the size. SQLite keeps what
// filters and context need, and says which segments make up the index: an update writes
// its segment, synced, before the transaction that names it commits, so that a reader
// sees a whole index, the old or the new.

// IndexFile is the index's file in a memory repo's state directory, and SegmentsDir the
// directory of its segments.
const (
	IndexFile   = "index.db"
	SegmentsDir = "search"
)

// indexVersion is the layout of the tables below and of the segments. An index of
// another version is made anew. 8: the short id an index of the id, not a column; 9:
// an entry's session its row in sessions; 10: summaries and subjects with no control
// characters (hint.OneLine); 11: the context blocks made; 12: each session's count of
// changes, which their keys hold; 13: the ids of the sessions that did something, by
// directory (sessions_cwd), which the context hook's kept file lists; 14: entries' ids
// with no index of their own (and segments of format 4); 15: entries_id, the index of
// the ids' keys (idKeyOf); 16: an entry's agent, memory type and tool its row in kinds,
// a subject that ends its summary the length of that end, markdown blobs' hashes cut
// to mdHashBytes, and segments of format 5; 17: entries found by their names in the
// segments (shortName, wholeName; segments of format 6), entries_id gone; 18: the
// lines of the blocks made kept (lines); 19: the words of arguments and results read
// with their strings' escapes decoded (readable); 20: every directory a session worked
// in (dirs); 21: a fetched branch's entries redacted again (fromFetched), the context
// hook's events not a session's time, the tips read (meta tips), working directories
// cleaned (workDir); 22: words with their marks, folded to compatibility forms, and
// Chinese, Japanese and Korean in pairs of characters (fulltext.Terms), an entry's size
// its tokens (shapeOf); 23: a fetched branch's session ids made safe (fromFetched).
const indexVersion = 23

// mdHashBytes is how much of its markdown file's blob's hash the index keeps of an
// entry: enough to name one object of many millions (vcs.Git.PackedWithPrefix says
// when it does not), where the whole hash was a ninth of the file.
const mdHashBytes = 8

// shortIDOf is the short id (memory.ShortID, lower case) of the id in column as SQL
// computes it, a ULID or a UUID.
func shortIDOf(column string) string {
	return `lower(CASE WHEN length(` + column + `) = 26 THEN substr(` + column + `, 15) ELSE substr(replace(` +
		column + `, '-', ''), 1, 12) END)`
}

// An entry's row has names in the segments (fulltext.Builder.Name), hashes of its id:
// shortName, of its short id (shortID), which a lookup by short id reads; and
// wholeName, which a lookup by whole id, and an update's, reads: the same for a ULID,
// whose short id is its 60 random bits, and of the whole id for any other, whose short
// id many may share (UUIDv7s of one millisecond, or what a fetched record holds). A
// lookup checks the id of each row a name gives. The names are kept in the segments,
// in order, written once with each update's words, where an index of the ids in SQLite
// had each update rewrite a page of it for nearly every entry it added (the ids are
// random): half an update's time in a year's index.
func shortName(id string) uint64 { return nameOf(shortID(id)) }

func wholeName(id string) uint64 {
	if len(id) == ulidLen {
		return shortName(id)
	}
	return nameOf("=" + id) // no short id starts so
}

// ulidLen is the length of a ULID, which memory.ShortID tells by it too.
const ulidLen = 26

func nameOf(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// params are n of SQL's parameters, as an IN list holds them: "?, ?, ?".
func params(n int) string { return strings.Repeat("?, ", n-1) + "?" }

// named are the rows the segments loaded give name: those that may be of an id.
func named(segs []segment, name uint64) ([]int64, error) {
	var rows []int64
	for _, s := range segs {
		of, err := s.Named(name)
		if err != nil {
			return nil, err
		}
		rows = append(rows, of...)
	}
	return rows, nil
}

// storedSubject is what entries keep of an entry's subject: where its summary ends
// with it ("Read src/app.go" and src/app.go, most of them), the length of that end;
// else the subject itself.
func storedSubject(summary, subject string) any {
	if subject != "" && strings.HasSuffix(summary, subject) {
		return len(subject)
	}
	return subject
}

// subjectOf is the subject that storedSubject kept, of an entry of summary.
func subjectOf(summary string, stored any) string {
	switch v := stored.(type) {
	case int64:
		if v >= 0 && v <= int64(len(summary)) {
			return summary[len(summary)-int(v):]
		}
	case string:
		return v
	}
	return ""
}

// storedMD is what entries keep of an entry's markdown file's blob's hash: its first
// mdHashBytes, or nil for none.
func storedMD(hash []byte) []byte {
	if len(hash) < mdHashBytes {
		return nil
	}
	return hash[:mdHashBytes]
}

// inSession is the condition that an entry (e) is of the session a query's argument
// names: entries name their session by its row, an id once per session.
const inSession = `e.session = (SELECT rowid FROM sessions WHERE id = ?)`

var schema = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE commits (hash TEXT PRIMARY KEY);
CREATE TABLE records (          -- the session records of commits: where entries are in git
	rowid   INTEGER PRIMARY KEY,
	commit_ TEXT NOT NULL,
	path    TEXT NOT NULL,      -- the record's first part
	origin  TEXT NOT NULL,      -- where it was read: "local", or a fetched branch
	UNIQUE (commit_, path)
);
-- Each agent, memory type and tool (an event's name) that entries have, once.
CREATE TABLE kinds (
	rowid  INTEGER PRIMARY KEY,
	source TEXT NOT NULL,
	type   TEXT NOT NULL,
	tool   TEXT NOT NULL,
	UNIQUE (source, type, tool)
);
CREATE TABLE entries (
	rowid   INTEGER PRIMARY KEY AUTOINCREMENT, -- never given again: dead names rows
	id      TEXT NOT NULL,   -- unique: an update looks an entry up by its name (wholeName) before it adds one
	event   TEXT NOT NULL,   -- "" for an observation, else the event's name
	session INTEGER NOT NULL, -- its session's row
	kind    INTEGER NOT NULL, -- its agent, memory type and tool: their row in kinds
	ts      INTEGER NOT NULL, -- Unix nanoseconds
	failed  INTEGER NOT NULL,
	summary TEXT NOT NULL,
	subject NOT NULL,         -- the files a call named, one a line, or the command it ran, or "";
	                          -- an integer where the summary ends with it: the length of that end
	size    INTEGER NOT NULL, -- about the tokens reading the entry whole costs (shapeOf)
	record  INTEGER NOT NULL, -- the record that holds it; 0 while pending
	line    INTEGER NOT NULL, -- its line in that record, from 1
	form    INTEGER NOT NULL, -- its markdown file's name (render.Path): 0 none, 1 short, 2 long
	md      BLOB              -- the start of its markdown file's blob's hash (mdHashBytes), NULL for none
);
CREATE INDEX entries_session ON entries (session, ts);
CREATE INDEX entries_pending ON entries (record) WHERE record = 0;
-- A session's row is never deleted, and one made later has a larger rowid: an update
-- looks up no entry of a session it made the row of (writer.indexedAs).
CREATE TABLE sessions (
	rowid        INTEGER PRIMARY KEY, -- what its entries name it by
	id           TEXT NOT NULL UNIQUE,
	source       TEXT NOT NULL,
	first        INTEGER NOT NULL,
	last         INTEGER NOT NULL,
	cwd          TEXT NOT NULL,
	first_prompt TEXT NOT NULL,
	prompt_at    INTEGER NOT NULL,
	observations INTEGER NOT NULL,
	failures     INTEGER NOT NULL,
	origin       TEXT NOT NULL,
	changes      INTEGER NOT NULL DEFAULT 0 -- its entries indexed before that changed or went: what a kept context block's key counts
);
CREATE INDEX sessions_last ON sessions (last);
-- The sessions that did something, with their ids: what the kept file for the context
-- hook lists (kept.Did). A block counts by dirs.
CREATE INDEX sessions_cwd ON sessions (cwd, id) WHERE observations > 0 OR first_prompt <> '';
-- Every directory a session worked in (its entries' cwd), with its row: what a project
-- filter reads, a session that moved into a project in it as one that began there.
CREATE TABLE dirs (cwd TEXT NOT NULL, session INTEGER NOT NULL, PRIMARY KEY (cwd, session)) WITHOUT ROWID;
-- The blocks Context made, each under the key of the sessions it was made from, the
-- latest made (a count) kept.
CREATE TABLE contexts (
	project   TEXT NOT NULL,
	max_chars INTEGER NOT NULL,
	key       TEXT NOT NULL,
	block     TEXT NOT NULL, -- the Context, as JSON
	made      INTEGER NOT NULL,
	PRIMARY KEY (project, max_chars)
) WITHOUT ROWID;
-- docs: the segment's documents, at least 1 once written (it may hold names only); 0
-- while it is being made.
-- Each session's line in the latest block made of it, under the key of what it was made
-- from (lineKey, hashed), and the ids it cites (a JSON array).
CREATE TABLE lines (session INTEGER PRIMARY KEY, key TEXT NOT NULL, line TEXT NOT NULL, cited TEXT NOT NULL);
CREATE TABLE segments (id INTEGER PRIMARY KEY AUTOINCREMENT, docs INTEGER NOT NULL);
-- An entry indexed again in segment before, or gone (before the largest id there is):
-- its words in the segments before that one are dead.
CREATE TABLE dead (entry INTEGER NOT NULL, before INTEGER NOT NULL, PRIMARY KEY (entry, before)) WITHOUT ROWID;
`

// Index is an open search index: its tables, and the segments they name, mapped once
// read (loadSegments).
type Index struct {
	db   *sql.DB
	path string
	dir  string      // the segments'
	segs []segment   // nil until loaded
	gen  string      // their generation when loaded
	anew bool        // the next update empties the index first (RebuildIndex)
	file os.FileInfo // the file opened (replaced)
	// unwritable is why the index is read as it is (openAsItIs), which every update
	// fails with; nil for one opened to be written.
	unwritable error
}

// segment is a segment file of the index, open.
type segment struct {
	id int64
	*fulltext.Segment
}

// OpenIndex opens the index in stateDir, made anew when its file is missing, damaged,
// or of another version: without a word to the caller, since it loses nothing. A
// damaged segment is found when the segments are read, and the index made anew then
// (openUpdated). An index that opens for none of those reasons (a read-only file
// system, a repo of another user's, a full disk) is not removed, which would lose it
// while nothing could make it anew: it is read as it is (Unwritable), if it can be.
func OpenIndex(stateDir string) (*Index, error) {
	path := filepath.Join(stateDir, IndexFile)
	dir := filepath.Join(stateDir, SegmentsDir)
	ix, err := openIndex(path, dir, "")
	for try := 0; busy(err) && try < openTries; try++ {
		// Another process makes the file's tables, or switches it to WAL: where waiting
		// for it could deadlock, SQLite says busy at once rather than wait its timeout.
		time.Sleep(openWait)
		ix, err = openIndex(path, dir, "")
	}
	if err == nil {
		return ix, nil
	}
	if busy(err) { // another process holds it: it is not damaged
		return nil, fmt.Errorf("search index %s: %w", path, err)
	}
	if cannotWrite(err) && !mendedAnew(path, err) {
		if ix, rerr := openAsItIs(path, dir, err); rerr == nil {
			return ix, nil
		}
		return nil, fmt.Errorf("search index %s: %w", path, err)
	}
	if err := RemoveIndex(stateDir); err != nil {
		return nil, fmt.Errorf("search index: %w", err)
	}
	if ix, err = openIndex(path, dir, ""); err != nil {
		return nil, fmt.Errorf("search index %s: %w", path, err)
	}
	return ix, nil
}

// mendedAnew says whether the index at path, which failed to open with err, is one a
// new file mends: damaged, of another version, or something else in its place.
func mendedAnew(path string, err error) bool {
	if damaged(err) || errors.Is(err, errOtherVersion) {
		return true
	}
	fi, serr := os.Lstat(path)
	return serr == nil && !fi.Mode().IsRegular()
}

// errOtherVersion is an index made by an agmem of another version.
var errOtherVersion = errors.New("an index of another version")

// errUnwritable is an index read as it is, which cannot be brought up to date.
var errUnwritable = errors.New("the index's files cannot be written")

// cannotWrite says whether err is an index that cannot be written: on a read-only file
// system, a full disk, in files this process may not write, or read as it is
// (openAsItIs). Waiting mends none of them.
func cannotWrite(err error) bool {
	if errors.Is(err, errUnwritable) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission) {
		return true
	}
	var coded interface{ Code() int }
	if !errors.As(err, &coded) {
		return false
	}
	switch coded.Code() & 0xff {
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_FULL, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM:
		return true
	}
	return false
}

// openAsItIs opens the index at path read-only: for an index that cannot be opened for
// writing, for why (its error), which each update of it fails with. Read-only as SQLite
// reads a file others may write (a repo of another user's, whose hooks go on), else,
// where that cannot be (no shared-memory file can be made), taken to change under no
// one (immutable), as on a read-only file system.
func openAsItIs(path, dir string, why error) (*Index, error) {
	var err error
	for _, mode := range []string{"mode=ro&", "mode=ro&immutable=1&"} {
		var ix *Index
		if ix, err = openIndex(path, dir, mode); err == nil {
			ix.unwritable = fmt.Errorf("%w: %w", errUnwritable, why)
			return ix, nil
		}
	}
	return nil, err
}

// busy reports whether err is SQLite's SQLITE_BUSY or SQLITE_LOCKED: the index is in
// another's hands for longer than its busy timeout.
func busy(err error) bool {
	var coded interface{ Code() int }
	if !errors.As(err, &coded) {
		return false
	}
	code := coded.Code() & 0xff // the primary code of an extended one
	return code == sqlite3.SQLITE_BUSY || code == sqlite3.SQLITE_LOCKED
}

// RemoveIndex removes the index in stateDir, which the next OpenIndex makes anew, and
// the kept file made from it.
func RemoveIndex(stateDir string) error {
	if err := kept.Remove(stateDir); err != nil {
		return err
	}
	path := filepath.Join(stateDir, IndexFile)
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.RemoveAll(path + suffix); err != nil { // whatever is there: a directory too
			return err
		}
	}
	return os.RemoveAll(filepath.Join(stateDir, SegmentsDir))
}

// busyTimeout is how long, in milliseconds, a process waits for the index's write lock.
const busyTimeout = 10000

// openTries and openWait bound how long OpenIndex tries again when SQLite says busy at
// once (four processes making a new index together met it: TestUpdatesTakeTurns).
const (
	openTries = 50
	openWait  = 20 * time.Millisecond
)

// openIndex opens the index at path, its segments in dir; mode is "" to write it, or
// SQLite's URI parameters that open it read-only ("mode=ro&"), which check then only
// reads.
func openIndex(path, dir, mode string) (*Index, error) {
	// WAL (set once, when the file is made: the file keeps it, and setting it again on
	// every open was a tenth of a search's own time): a search reads while an update
	// writes; busy_timeout and _txlock=immediate: two
	// updates take turns, each transaction holding the write lock from its start, so that
	// none reads what another then changes under it (SQLITE_BUSY_SNAPSHOT); a page cache
	// of up to 64 MiB, filled as pages are read: a rebuild's inserts into the entries'
	// indexes read pages from the file for a third of their time with the default 2 MiB;
	// the file mapped (up to 4 GiB) rather than read into that cache a page at a time: a
	// process that reads a few hundred pages once, as agmem context does, spent half its
	// time in the reads and in allocating the cache's pages.
	db, err := sql.Open("sqlite", "file:"+path+"?"+mode+"_txlock=immediate&_pragma=busy_timeout("+strconv.Itoa(busyTimeout)+")&_pragma=synchronous(NORMAL)&_pragma=cache_size(-65536)&_pragma=mmap_size(4294967296)")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1) // one connection: a transaction sees its own writes
	ix := &Index{db: db, path: path, dir: dir}
	if err := ix.check(); err != nil {
		ix.Close()
		return nil, err
	}
	if ix.file, err = os.Stat(path); err != nil {
		ix.Close()
		return nil, err
	}
	return ix, nil
}

// replaced says whether the file at the index's path is no longer the one open: removed
// (by another process that found it damaged, or with its repo) or made anew. What
// updates the open one then is this process alone, and its segments may be gone.
func (ix *Index) replaced() bool {
	fi, err := os.Stat(ix.path)
	return err != nil || !os.SameFile(fi, ix.file)
}

// check makes sure the file is an index of this version, making the tables in a file
// that has none yet. Its segments are opened when first read (loadSegments): an update
// after a flush reads none of them, and opening them twice (before it, then after the
// segment it wrote) was a tenth of its time.
func (ix *Index) check() error {
	var version int
	if err := ix.db.QueryRow("PRAGMA user_version").Scan(&version); err != nil {
		return err
	}
	if version == 0 {
		if _, err := ix.db.Exec("PRAGMA journal_mode = WAL"); err != nil {
			return err
		}
		var err error
		if version, err = ix.create(); err != nil {
			return err
		}
	}
	if version != indexVersion {
		return fmt.Errorf("%w (%d)", errOtherVersion, version)
	}
	// A damaged file fails here or soon after; quick_check reads every page, which costs
	// too much on every open.
	var n int
	return ix.db.QueryRow("SELECT count(*) FROM meta").Scan(&n)
}

// create makes the tables in a file that has none, and returns the file's version: the
// tables' own, or that of the tables another process made since the caller looked.
func (ix *Index) create() (int, error) {
	tx, err := ix.db.Begin()
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var version int
	if err := tx.QueryRow("PRAGMA user_version").Scan(&version); err != nil || version != 0 {
		return version, err
	}
	if _, err := tx.Exec(schema); err != nil {
		return 0, err
	}
	if _, err := tx.Exec("PRAGMA user_version = " + strconv.Itoa(indexVersion)); err != nil {
		return 0, err
	}
	return indexVersion, tx.Commit()
}

// loadSegments opens the segments the index names, as it names them now, and lets go
// of those it named before; unless nothing changed them since they were opened (their
// generation in meta). The segments and their dead entries are read apart: when another
// process changed them meanwhile (the generation moved on, or a segment was removed by
// a merge), they are read again.
func (ix *Index) loadSegments() error {
	for try := 0; ; try++ {
		gen, err := ix.segmentsGen()
		if err != nil {
			return err
		}
		if ix.gen == gen && ix.segs != nil {
			return nil
		}
		segs, err := ix.openSegments()
		if errors.Is(err, os.ErrNotExist) && try < 3 {
			continue
		}
		if err != nil {
			return err
		}
		if now, err := ix.segmentsGen(); err != nil || now != gen && try < 3 {
			for _, s := range segs {
				s.Close()
			}
			if err != nil {
				return err
			}
			continue
		}
		ix.closeSegments()
		ix.segs, ix.gen = segs, gen
		return nil
	}
}

func (ix *Index) segmentsGen() (string, error) { return segmentsGen(ix.db) }

// segmentsGen is the segments' generation, as q reads it.
func segmentsGen(q metaReader) (string, error) {
	var gen string
	err := q.QueryRow(`SELECT coalesce((SELECT value FROM meta WHERE key = ?), '0')`, metaSegments).Scan(&gen)
	return gen, err
}

// metaSegments is the meta key of the segments' generation, a number each change to
// the segments or their dead entries counts up.
const metaSegments = "segments"

// changedSegments counts up the segments' generation.
func changedSegments(tx *sql.Tx) error {
	_, err := tx.Exec(`INSERT INTO meta (key, value) VALUES (?, '1')
		ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1`, metaSegments)
	return err
}

func (ix *Index) openSegments() ([]segment, error) {
	return openSegments(ix.db, ix.dir)
}

// openSegments opens the segments the index names, as q reads it, each with its dead
// entries left out.
func openSegments(q querier, dir string) ([]segment, error) {
	type died struct{ entry, before int64 }
	var dead []died
	rows, err := q.Query(`SELECT entry, before FROM dead`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var d died
		if err := rows.Scan(&d.entry, &d.before); err != nil {
			rows.Close()
			return nil, err
		}
		dead = append(dead, d)
	}
	rows.Close()
	ids, err := segmentIDs(q)
	if err != nil {
		return nil, err
	}
	var segs []segment
	for _, id := range ids {
		s, err := fulltext.Open(segmentPath(dir, id))
		if errors.Is(err, os.ErrNotExist) { // named, and gone: damaged, once a merge is not why
			err = fmt.Errorf("%w: %w", fulltext.ErrDamaged, err)
		}
		if err != nil {
			for _, s := range segs {
				s.Close()
			}
			return nil, err
		}
		killed := map[int64]bool{}
		for _, d := range dead {
			if id < d.before {
				killed[d.entry] = true
			}
		}
		s.Kill(killed)
		segs = append(segs, segment{id, s})
	}
	return segs, nil
}

type querier interface {
	Query(query string, args ...any) (*sql.Rows, error)
}

// segmentIDs are the ids of the index's segments, oldest first.
func segmentIDs(q querier) ([]int64, error) {
	return column[int64](q, `SELECT id FROM segments WHERE docs > 0 ORDER BY id`)
}

// column is the one column query selects, a row's value after another.
func column[T any](q querier, query string, args ...any) ([]T, error) {
	rows, err := q.Query(query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func segmentPath(dir string, id int64) string {
	return filepath.Join(dir, fmt.Sprintf("%06d.seg", id))
}

func (ix *Index) closeSegments() {
	for _, s := range ix.segs {
		s.Close()
	}
	ix.segs, ix.gen = nil, ""
}

// Close closes the index.
func (ix *Index) Close() error {
	ix.closeSegments()
	return ix.db.Close()
}

// Updated is what an Update added.
type Updated struct {
	Commits, Entries int
	Took             time.Duration
}

// Update brings the index up to date: every commit of this repo's branch and of each
// fetched agents/* branch not indexed yet, then the journal's entries recorded since
// the last update. Git comes first, so that what a flush just committed is indexed
// once, where it is, and its entries in the journal are only found there already; an
// entry a flush commits meanwhile is indexed as pending, and placed in its commit by the
// next update. It reads the journal in short transactions, as a replay does, after it
// reads git, and never holds it while it does; it decodes only the entries that are not
// as the commits it read hold them (writer.isCommitted). j may be nil (a clone with no
// journal).
//
// Once ctx is done it stops, leaving the index as it was, and returns ctx's error.
func (ix *Index) Update(ctx context.Context, git *vcs.Git, j *journal.Journal) (Updated, error) {
	return ix.update(ctx, git, j, false)
}

// update is Update; with idleWait, what the journal recorded since the last update is
// left for the next one when it is only idle events (onlyIdle).
func (ix *Index) update(ctx context.Context, git *vcs.Git, j *journal.Journal, idleWait bool) (Updated, error) {
	if ix.unwritable != nil {
		return Updated{}, ix.unwritable
	}
	start := time.Now()
	anew := ix.anew
	ix.anew = false // this update's only, whatever becomes of it
	if git != nil && j != nil && !anew {
		if fresh, err := ix.upToDate(git, j, idleWait); err == nil && fresh {
			return Updated{Took: time.Since(start)}, ix.settle(ctx)
		}
	}
	w, err := ix.writer(ctx)
	if err != nil {
		return Updated{}, err
	}
	defer w.rollback()
	if anew {
		if err := w.forgetAll(); err != nil {
			return Updated{}, fmt.Errorf("search index: %w", err)
		}
	}
	if git != nil {
		if j != nil {
			if err := w.readsJournalAfter(j); err != nil {
				return Updated{}, fmt.Errorf("search index: %w", err)
			}
		}
		if err := w.git(git); err != nil {
			return Updated{}, fmt.Errorf("search index: %w", err)
		}
	}
	if j != nil {
		if err := w.journal(j); err != nil {
			return Updated{}, fmt.Errorf("search index: %w", err)
		}
	}
	if err := w.commit(); err != nil {
		return Updated{}, fmt.Errorf("search index: %w", err)
	}
	if anew {
		// The segments of the index before, as big as the new ones, go now rather than at
		// the next update that writes one.
		if err := ix.sweep(); err != nil {
			return Updated{}, fmt.Errorf("search index: %w", err)
		}
	}
	if err := ix.settle(ctx); err != nil {
		return Updated{}, err
	}
	w.done.Took = time.Since(start)
	return w.done, nil
}

// sweep removes the segment files the index names no more, under its write lock (a
// transaction, which _txlock makes immediate): another update's new file, written
// before its transaction names it, is not swept.
func (ix *Index) sweep() error {
	tx, err := ix.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return sweepSegments(tx, ix.dir)
}

// settle merges what segments an update left to merge (one cut short by its deadline
// left some).
func (ix *Index) settle(ctx context.Context) error {
	if err := ix.mergeSegments(ctx); err != nil && ctx.Err() == nil {
		return fmt.Errorf("search index: %w", err)
	}
	return nil
}

// upToDate says whether the index holds what git and the journal hold: each branch's
// tip indexed, and no entry recorded since the last update, or with idleWait none but
// idle events. A reader that finds so takes no write lock, and waits for no writer, to
// find nothing to do.
func (ix *Index) upToDate(git *vcs.Git, j *journal.Journal, idleWait bool) (bool, error) {
	birth, last, err := j.Tip()
	if err != nil {
		return false, err
	}
	readBirth, seq, ok, err := journalRead(ix.db)
	if err != nil || !ok || readBirth != birth {
		return false, err
	}
	if seq != last {
		if !idleWait || seq > last || last-seq > kept.IdleBound {
			return false, nil
		}
		if idle, err := ix.onlyIdle(j, seq); err != nil || !idle {
			return false, err
		}
	}
	return ix.tipsIndexed(git)
}

// tipsIndexed says whether the branches the index reads are those its last update
// read, at the same tips.
func (ix *Index) tipsIndexed(git *vcs.Git) (bool, error) {
	srcs, err := sources(git)
	if err != nil {
		return false, err
	}
	read, err := readMeta(ix.db, metaTips)
	return err == nil && read == tipsOf(srcs), err
}

// onlyIdle says whether what the journal recorded after seq is only idle events
// (kept.IdleAfter) of sessions that did nothing in the index either.
func (ix *Index) onlyIdle(j *journal.Journal, seq uint64) (bool, error) {
	sessions, idle, err := kept.IdleAfter(j, seq)
	if err != nil || !idle {
		return false, err
	}
	for _, id := range sessions {
		var did int
		if err := ix.db.QueryRow(`SELECT count(*) FROM sessions WHERE id = ? AND `+didSomething, id).Scan(&did); err != nil || did > 0 {
			return false, err
		}
	}
	return true, nil
}

// didSomething is the condition on a session's row that it did something: a call or a
// prompt.
const didSomething = "(observations > 0 OR first_prompt <> '')"

// mergeFan is how many segments of one size mergeSegments merges into one: segments of
// n documents, from 8^k to 8^(k+1), are merged once there are this many of them, so that
// an index of n documents has a few segments of each size up to n, and each document
// is written again about log8(n) times over its life.
const mergeFan = 8

// mergeSegments merges segments of one size, while there are mergeFan of them, each
// merge a transaction: the merged segment's file, synced, then the rows that name it
// instead of those it holds, whose files go once it commits.
func (ix *Index) mergeSegments(ctx context.Context) error {
	for {
		merged, err := ix.mergeOnce(ctx)
		if err != nil || merged == nil {
			return err
		}
		for _, id := range merged {
			os.Remove(segmentPath(ix.dir, id)) // a reader that has it open reads on
		}
	}
}

// mergeOnce merges the segments of the first size that has mergeFan of them, and returns
// the ids of those it merged; nil when none was.
func (ix *Index) mergeOnce(ctx context.Context) ([]int64, error) {
	// Read without the write lock first: most updates merge nothing.
	group, err := mergeGroup(ix.db)
	if err != nil || group == nil {
		return nil, err
	}
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	res, err := tx.Exec(`INSERT INTO segments (docs) VALUES (0)`) // takes the write lock
	if err != nil {
		return nil, err
	}
	into, err := res.LastInsertId()
	if err != nil {
		return nil, err
	}
	if group, err = mergeGroup(tx); err != nil || group == nil { // another update merged them
		return nil, err
	}
	segs, err := openSegments(tx, ix.dir)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, s := range segs {
			s.Close()
		}
	}()
	var parts []*fulltext.Segment
	for _, s := range segs {
		if slices.Contains(group, s.id) {
			parts = append(parts, s.Segment)
		}
	}
	docs, err := fulltext.Merge(parts, segmentPath(ix.dir, into))
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(`UPDATE segments SET docs = ? WHERE id = ?`, max(docs, 1), into); err != nil {
		return nil, err
	}
	for _, id := range group {
		if _, err := tx.Exec(`DELETE FROM segments WHERE id = ?`, id); err != nil {
			return nil, err
		}
	}
	// What is dead before a segment no segment before it holds any more is dead nowhere.
	if _, err := tx.Exec(`DELETE FROM dead WHERE before <= (SELECT min(id) FROM segments WHERE docs > 0)`); err != nil {
		return nil, err
	}
	if err := changedSegments(tx); err != nil {
		return nil, err
	}
	return group, tx.Commit()
}

// mergeGroup is the segments to merge next: the first mergeFan of one size, oldest
// first; nil for none.
func mergeGroup(q querier) ([]int64, error) {
	rows, err := q.Query(`SELECT id, docs FROM segments WHERE docs > 0 ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	bySize := map[int][]int64{}
	for rows.Next() {
		var id, docs int64
		if err := rows.Scan(&id, &docs); err != nil {
			return nil, err
		}
		size := int(math.Log(float64(docs)) / math.Log(mergeFan))
		if bySize[size] = append(bySize[size], id); len(bySize[size]) == mergeFan {
			return bySize[size], nil
		}
	}
	return nil, rows.Err()
}

// UpdateIndex brings the index in stateDir up to date with git and j, as Update does,
// opening and closing it: what a flush, a pull or an import does once it is done. Then
// it makes anew the kept context blocks that what it added changed (refreshBlocks), and
// the kept file for the context hook (KeepForHook). Updated.Took counts them all.
func UpdateIndex(stateDir string, git *vcs.Git, j *journal.Journal) (Updated, error) {
	return updateIndex(stateDir, git, j, false)
}

// RebuildIndex makes the index in stateDir anew from git and j, as UpdateIndex brings
// it up to date: in the one transaction that empties it (forgetAll), so that what
// reads it meanwhile reads it whole as it was, and an update of another process waits
// its turn, where removing its files pulled them from under both. An index too damaged
// for that is removed and made anew (openUpdated).
func RebuildIndex(stateDir string, git *vcs.Git, j *journal.Journal) (Updated, error) {
	return updateIndex(stateDir, git, j, true)
}

func updateIndex(stateDir string, git *vcs.Git, j *journal.Journal, anew bool) (Updated, error) {
	start := time.Now()
	ix, u, err := openUpdated(context.Background(), stateDir, git, j, false, false, anew)
	if ix == nil {
		return u, err
	}
	defer ix.Close()
	m := &Memory{Index: ix, git: git, journal: j}
	if err == nil && (u.Entries > 0 || u.Commits > 0) {
		if err = m.refreshBlocks(); err != nil {
			err = fmt.Errorf("context blocks: %w", err)
		}
	}
	if err == nil && git != nil {
		if err = m.KeepForHook(memrepo.Repo{Root: git.Root}, "", 0); err != nil {
			err = hint.With(fmt.Errorf("the context blocks were not kept for the hook: %w", err),
				"the index is up to date; the context hook answers from it meanwhile")
		}
	}
	u.Took = time.Since(start)
	return u, err
}

// openUpdated opens the index in stateDir and brings it up to date, as Update does,
// and to read it opens its segments; an index found damaged (a segment, the SQLite
// file) is made anew, once. The index comes back open, whatever the update's error,
// unless it could not be opened.
func openUpdated(ctx context.Context, stateDir string, git *vcs.Git, j *journal.Journal, idleWait, read, anew bool) (*Index, Updated, error) {
	ix, err := OpenIndex(stateDir)
	if err != nil {
		return nil, Updated{}, err
	}
	ix.anew = anew
	u, err := ix.updateToRead(ctx, git, j, idleWait, read)
	if damaged(err) && ix.unwritable == nil { // one read as it is could not be made anew
		ix.Close()
		if err := RemoveIndex(stateDir); err != nil {
			return nil, Updated{}, err
		}
		if ix, err = OpenIndex(stateDir); err != nil {
			return nil, Updated{}, err
		}
		u, err = ix.updateToRead(ctx, git, j, idleWait, read)
	}
	return ix, u, err
}

// errDamaged is damage found in the index's tables: rows its segments name are not there.
var errDamaged = errors.New("the index is damaged")

// remake makes the memory's index anew, found damaged while it was read, as
// RebuildIndex does: in one transaction, so that others reading or updating it
// meanwhile are not pulled from under, and by removing it only when that fails as
// damaged too (openUpdated). What reads it next reads the index made anew.
func (m *Memory) remake() error {
	ix, _, err := openUpdated(context.Background(), filepath.Dir(m.Index.path), m.git, m.journal, false, true, true)
	if ix != nil { // the one before is read no more; where none opened, it stays
		m.Index.Close()
		m.Index = ix
	}
	return err
}

// updateToRead is update, and with read the segments opened after it, whatever its
// error (an index not brought up to date is read as it was): a damaged one is then
// found, and made anew, before it is searched.
func (ix *Index) updateToRead(ctx context.Context, git *vcs.Git, j *journal.Journal, idleWait, read bool) (Updated, error) {
	u, err := ix.update(ctx, git, j, idleWait)
	if !read {
		return u, err
	}
	if lerr := ix.loadSegments(); lerr != nil && (err == nil || damaged(lerr)) {
		return u, fmt.Errorf("search index: %w", lerr)
	}
	return u, err
}

// damaged reports whether err says the index's files are damaged.
func damaged(err error) bool {
	if errors.Is(err, fulltext.ErrDamaged) || errors.Is(err, errDamaged) {
		return true
	}
	var coded interface{ Code() int }
	if !errors.As(err, &coded) {
		return false
	}
	code := coded.Code() & 0xff
	return code == sqlite3.SQLITE_CORRUPT || code == sqlite3.SQLITE_NOTADB
}
