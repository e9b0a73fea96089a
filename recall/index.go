package recall

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	_ "modernc.org/sqlite" // the engine: SQLite, with FTS5, in pure Go

	"github.com/agmem/agmem/journal"
	"github.com/agmem/agmem/vcs"
)

// The search index is derived, never the truth: .agmem/index.db, a SQLite file that
// Update fills from what git holds (this repo's branch and every fetched agents/*
// branch) and what the journal holds that no commit does yet. Deleting it loses
// nothing: the next Open makes it anew, and Update fills it again.
//
// Why SQLite's FTS5 (BENCHMARKS.md): measured beside bleve on 200,000 observations,
// it built 4 times faster into an index half the size, ranks by BM25, takes phrases,
// prefixes and AND/OR/NOT, and keeps the metadata that filters and context need in
// ordinary tables of the same file. Its FTS table is contentless: it holds the words,
// not the text, which stays in git and the journal; snippets are cut from there.

// IndexFile is the index's file in a memory repo's state directory.
const IndexFile = "index.db"

// indexVersion is the layout of the tables below. An index of another version is made
// anew.
const indexVersion = 4

const schema = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE commits (hash TEXT PRIMARY KEY);
CREATE TABLE records (          -- the session records of commits: where entries are in git
	rowid   INTEGER PRIMARY KEY,
	commit_ TEXT NOT NULL,
	path    TEXT NOT NULL,      -- the record's first part
	origin  TEXT NOT NULL,      -- where it was read: "local", or a fetched branch
	UNIQUE (commit_, path)
);
CREATE TABLE entries (
	rowid   INTEGER PRIMARY KEY,
	id      TEXT NOT NULL UNIQUE,
	short   TEXT NOT NULL,
	event   TEXT NOT NULL,   -- "" for an observation, else the event's name
	session TEXT NOT NULL,
	source  TEXT NOT NULL,
	type    TEXT NOT NULL,
	tool    TEXT NOT NULL,
	ts      INTEGER NOT NULL, -- Unix nanoseconds
	failed  INTEGER NOT NULL,
	summary TEXT NOT NULL,
	subject TEXT NOT NULL,    -- the files a call named, one a line, or the command it ran, or ""
	size    INTEGER NOT NULL, -- bytes of the entry's JSON
	record  INTEGER NOT NULL, -- the record that holds it; 0 while pending
	line    INTEGER NOT NULL, -- its line in that record, from 1
	form    INTEGER NOT NULL  -- its markdown file's name (render.Path): 0 none, 1 short, 2 long
);
CREATE INDEX entries_session ON entries (session, ts);
CREATE INDEX entries_short ON entries (short);
CREATE INDEX entries_pending ON entries (record) WHERE record = 0;
CREATE TABLE sessions (
	id           TEXT PRIMARY KEY,
	source       TEXT NOT NULL,
	first        INTEGER NOT NULL,
	last         INTEGER NOT NULL,
	cwd          TEXT NOT NULL,
	first_prompt TEXT NOT NULL,
	prompt_at    INTEGER NOT NULL,
	observations INTEGER NOT NULL,
	failures     INTEGER NOT NULL,
	origin       TEXT NOT NULL
);
CREATE INDEX sessions_last ON sessions (last);
CREATE VIRTUAL TABLE words USING fts5 (tool, summary, arguments, result, error, paths,
	content = '', contentless_delete = 1, tokenize = 'unicode61');
-- Merge the index's segments more often and in bigger steps: measured faster to build.
INSERT INTO words (words, rank) VALUES ('automerge', 8);
INSERT INTO words (words, rank) VALUES ('hashsize', 16777216);
`

// Index is an open search index.
type Index struct {
	db   *sql.DB
	path string
}

// OpenIndex opens the index in stateDir, made anew when it is missing, damaged, or of
// another version: without a word to the caller, since it loses nothing.
func OpenIndex(stateDir string) (*Index, error) {
	path := filepath.Join(stateDir, IndexFile)
	ix, err := openIndex(path)
	if err == nil {
		return ix, nil
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(path + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("search index: %w", err)
		}
	}
	if ix, err = openIndex(path); err != nil {
		return nil, fmt.Errorf("search index %s: %w", path, err)
	}
	return ix, nil
}

func openIndex(path string) (*Index, error) {
	// WAL: a search reads while an update writes; busy_timeout: two updates take turns.
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1) // one connection: a transaction sees its own writes
	ix := &Index{db: db, path: path}
	if err := ix.check(); err != nil {
		db.Close()
		return nil, err
	}
	return ix, nil
}

// check makes sure the file is an index of this version, making the tables in a file
// that has none yet.
func (ix *Index) check() error {
	var version int
	if err := ix.db.QueryRow("PRAGMA user_version").Scan(&version); err != nil {
		return err
	}
	switch version {
	case indexVersion:
		// A damaged file fails here or soon after; quick_check reads every page, which
		// costs too much on every open.
		var n int
		return ix.db.QueryRow("SELECT count(*) FROM meta").Scan(&n)
	case 0:
		tx, err := ix.db.Begin()
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if _, err := tx.Exec(schema); err != nil {
			return err
		}
		if _, err := tx.Exec("PRAGMA user_version = " + strconv.Itoa(indexVersion)); err != nil {
			return err
		}
		return tx.Commit()
	}
	return fmt.Errorf("an index of version %d", version)
}

// Close closes the index.
func (ix *Index) Close() error { return ix.db.Close() }

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
// next update. It reads the journal in short transactions, as a replay does, and never
// holds it while it reads git. j may be nil (a clone with no journal).
//
// Once ctx is done it stops, leaving the index as it was, and returns ctx's error.
func (ix *Index) Update(ctx context.Context, git *vcs.Git, j *journal.Journal) (Updated, error) {
	start := time.Now()
	w, err := ix.writer(ctx)
	if err != nil {
		return Updated{}, err
	}
	defer w.rollback()
	if git != nil {
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
	w.done.Took = time.Since(start)
	return w.done, nil
}

// UpdateIndex brings the index in stateDir up to date with git and j, as Update does,
// opening and closing it: what a flush, a pull or an import does once it is done.
func UpdateIndex(stateDir string, git *vcs.Git, j *journal.Journal) (Updated, error) {
	ix, err := OpenIndex(stateDir)
	if err != nil {
		return Updated{}, err
	}
	defer ix.Close()
	return ix.Update(context.Background(), git, j)
}
