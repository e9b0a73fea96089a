package recall

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/agmem/agmem/capture"
	"github.com/agmem/agmem/internal/failpoint"
	"github.com/agmem/agmem/journal"
	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/render"
	"github.com/agmem/agmem/vcs"
)

// writer is one Update's transaction.
type writer struct {
	ctx  context.Context
	tx   *sql.Tx
	done Updated
	// statements, prepared once a transaction
	insert, find, place, words, record, session *sql.Stmt
	rewrite, unword                             *sql.Stmt // an entry indexed before that changed since
	// sessions tallies what the entries added tell of their sessions, written at the end
	sessions map[string]*sessionTally
	order    []string // the sessions' ids, as first seen
}

func (ix *Index) writer(ctx context.Context) (*writer, error) {
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("search index: %w", err)
	}
	w := &writer{ctx: ctx, tx: tx, sessions: map[string]*sessionTally{}}
	for _, s := range []struct {
		stmt **sql.Stmt
		sql  string
	}{
		{&w.insert, `INSERT INTO entries (id, short, event, session, source, type, tool, ts, failed,
			summary, subject, size, record, line, form) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (id) DO NOTHING`},
		{&w.find, `SELECT rowid, record, failed, size FROM entries WHERE id = ?`},
		{&w.rewrite, `UPDATE entries SET type = ?, tool = ?, failed = ?, summary = ?, subject = ?, size = ? WHERE rowid = ?`},
		{&w.unword, `DELETE FROM words WHERE rowid = ?`},
		{&w.place, `UPDATE entries SET record = ?, line = ?, form = ? WHERE rowid = ?`},
		{&w.words, `INSERT INTO words (rowid, tool, summary, arguments, result, error, paths) VALUES (?,?,?,?,?,?,?)`},
		{&w.record, `INSERT INTO records (commit_, path, origin) VALUES (?,?,?)
			ON CONFLICT (commit_, path) DO UPDATE SET origin = origin RETURNING rowid`},
		{&w.session, `INSERT INTO sessions (id, source, first, last, cwd, first_prompt, prompt_at, observations, failures, origin)
			VALUES (?,?,?,?,?,?,?,?,?,?)
			ON CONFLICT (id) DO UPDATE SET
				source = CASE WHEN source = '' THEN excluded.source ELSE source END,
				first = min(first, excluded.first), last = max(last, excluded.last),
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
	return w, nil
}

// sessionTally is what the entries one update added tell of their session, merged with
// what the index knew as the sessions statement says.
type sessionTally struct {
	source, cwd, prompt, origin string
	first, last, promptAt       int64
	observations, failures      int
}

func (t *sessionTally) add(source, cwd, prompt, origin string, at int64, observations, failures int) {
	if t.source == "" {
		t.source = source
	}
	if t.cwd == "" {
		t.cwd = cwd
	}
	if t.origin == "" {
		t.origin = origin
	}
	if t.first == 0 || at < t.first {
		t.first = at
	}
	t.last = max(t.last, at)
	if prompt != "" && (t.prompt == "" || at < t.promptAt) {
		t.prompt, t.promptAt = prompt, at
	}
	t.observations += observations
	t.failures += failures
}

// writeSessions writes the sessions' tallies.
func (w *writer) writeSessions() error {
	for _, id := range w.order {
		t := w.sessions[id]
		if _, err := w.session.Exec(id, t.source, t.first, t.last, t.cwd, t.prompt, t.promptAt, t.observations, t.failures, t.origin); err != nil {
			return err
		}
	}
	return nil
}

func (w *writer) commit() error {
	if err := w.writeSessions(); err != nil {
		return err
	}
	return w.tx.Commit()
}

func (w *writer) rollback() { w.tx.Rollback() }

func (w *writer) meta(key string) (string, error) {
	var v string
	err := w.tx.QueryRow(`SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

func (w *writer) setMeta(key, value string) error {
	_, err := w.tx.Exec(`INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	return err
}

// place is where git holds an entry; the zero place is the journal's, pending.
type place struct {
	record int64 // its record's row; 0 while pending
	line   int
	form   int // its markdown file's name
	origin string
}

// journal indexes the entries the journal recorded since the last update, as pending:
// one git holds was indexed there just before, or is placed when its commit is.
func (w *writer) journal(j *journal.Journal) error {
	after, err := w.meta("journal_seq")
	if err != nil {
		return err
	}
	seq, _ := strconv.ParseUint(after, 10, 64)
	add := func(e memory.Entry) error { return w.add(e, place{origin: Local}) }
	last, err := j.Since(seq, add)
	if err != nil {
		return err
	}
	if last < seq {
		// A journal made anew (the old one moved aside): what it held pending is gone.
		if err := w.dropPending(); err != nil {
			return err
		}
		if last, err = j.Since(0, add); err != nil {
			return err
		}
	}
	return w.setMeta("journal_seq", strconv.FormatUint(last, 10))
}

// dropPending forgets every entry no commit holds.
func (w *writer) dropPending() error {
	if _, err := w.tx.Exec(`DELETE FROM words WHERE rowid IN (SELECT rowid FROM entries WHERE record = 0)`); err != nil {
		return err
	}
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
	for _, s := range srcs {
		if s.tip.IsZero() {
			continue
		}
		commits, err := w.unindexed(git, s.tip)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		for _, c := range commits {
			if err := w.indexCommit(git, c, s.name); err != nil {
				return fmt.Errorf("%s: commit %s: %w", s.name, c.hash, err)
			}
		}
	}
	return nil
}

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

// indexCommit indexes the entries of an agmem commit's session records. A record of a
// fetched branch that does not read as entries, which anyone could have written, is
// passed over; one of this repo's own is an error.
func (w *writer) indexCommit(git *vcs.Git, c walked, origin string) error {
	if c.batch == "" {
		return nil // a person's commit
	}
	files, err := git.AddedPaths(c.hash, isRecordPart)
	if err != nil {
		return err
	}
	data := map[string][]byte{}
	markdown := map[string]bool{}
	var names []string
	for _, f := range files {
		switch {
		case isRecordPart(f.Path):
			data[f.Path] = f.Data
			names = append(names, f.Path)
		case strings.HasSuffix(f.Path, ".md"):
			markdown[f.Path] = true
		}
	}
	w.done.Commits++
	failpoint.Hit("index-midway") // inside the transaction: SQLite must drop it whole
	for _, parts := range render.RecordFiles(names) {
		var whole bytes.Buffer
		for _, p := range parts {
			whole.Write(data[p])
		}
		entries, err := render.ParseSessionRecord(whole.Bytes())
		if err != nil {
			if origin != Local {
				continue
			}
			return fmt.Errorf("%s: %w", parts[0], err)
		}
		var record int64
		if err := w.record.QueryRow(c.hash.String(), parts[0], origin).Scan(&record); err != nil {
			return err
		}
		for i, e := range entries {
			at := place{record: record, line: i + 1, origin: origin}
			if o := e.Observation; o != nil {
				for i, f := range render.Forms {
					if markdown[f.Path(o)] {
						at.form = i + 1
						break
					}
				}
			}
			if err := w.add(e, at); err != nil {
				return err
			}
		}
	}
	return nil
}

func isRecordPart(path string) bool {
	return strings.HasPrefix(path, render.SessionsDir+"/") && strings.HasSuffix(path, ".jsonl")
}

// add indexes an entry at its place. An entry indexed before keeps its row; one that
// was pending is placed in the commit that now holds it; one that changed since (a call
// reported before its result, then answered: the journal gives it again) is indexed
// again in its row.
func (w *writer) add(e memory.Entry, at place) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	r := rowOf(e)
	res, err := w.insert.Exec(e.ID(), shortID(e.ID()), r.event, e.Session(), e.Source(), r.memoryType, r.tool,
		e.Time().UnixNano(), r.failed, r.summary, r.subject, r.size, at.record, at.line, at.form)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		if err != nil {
			return err
		}
		var rowid, record int64 // indexed before
		var failed, size int
		if err := w.find.QueryRow(e.ID()).Scan(&rowid, &record, &failed, &size); err != nil {
			return err
		}
		if record == 0 && at.record != 0 {
			if _, err := w.place.Exec(at.record, at.line, at.form, rowid); err != nil {
				return err
			}
		}
		if r.event != "" || failed == r.failed && size == r.size {
			return nil
		}
		return w.reindex(e, r, rowid, r.failed-failed)
	}
	rowid, err := res.LastInsertId()
	if err != nil {
		return err
	}
	if r.searchable {
		if _, err := w.words.Exec(rowid, r.tool, r.words, r.arguments, r.result, r.error, r.paths); err != nil {
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
	w.tally(e.Session()).add(e.Source(), r.cwd, prompt, at.origin, e.Time().UnixNano(), obs, failures)
	w.done.Entries++
	return nil
}

// reindex indexes anew an observation in the row it had, which the session's failures
// change by failed.
func (w *writer) reindex(e memory.Entry, r row, rowid int64, failed int) error {
	if _, err := w.rewrite.Exec(r.memoryType, r.tool, r.failed, r.summary, r.subject, r.size, rowid); err != nil {
		return err
	}
	if _, err := w.unword.Exec(rowid); err != nil {
		return err
	}
	if _, err := w.words.Exec(rowid, r.tool, r.words, r.arguments, r.result, r.error, r.paths); err != nil {
		return err
	}
	w.tally(e.Session()).add(e.Source(), r.cwd, "", "", e.Time().UnixNano(), 0, failed)
	return nil
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
		r := row{memoryType: string(o.MemoryType), tool: o.ToolName, cwd: o.Cwd, summary: o.Summary,
			searchable: true, words: o.Summary, arguments: string(o.Arguments), result: o.ResultText(), error: o.Error,
			paths: capture.FilePath(o.Arguments)}
		command := commandOf(o.Arguments)
		if files := capture.PatchFiles(command); r.paths == "" && files != nil {
			// Codex edits with a patch: its files are what it names.
			r.paths, command = strings.Join(files, "\n"), ""
		}
		r.subject = r.paths
		if r.subject == "" {
			r.subject = oneLine(command, maxSummary)
		}
		if o.Error != "" {
			r.failed = 1
		}
		r.size = len(o.Arguments) + len(o.Result) + len(o.Error) + len(o.Summary) + len(o.ToolName) + 200
		return r
	}
	v := e.Event
	r := row{event: v.Name, tool: v.Name, cwd: v.Attrs["cwd"], summary: oneLine(v.Text, maxSummary),
		size: len(v.Text) + 200}
	if v.Name == "UserPromptSubmit" {
		r.searchable, r.words = true, v.Text // once: its summary is the start of it
	}
	return r
}

// commandOf is the command a call's arguments ran ("command", or "cmd" as some agents
// name it), or "".
func commandOf(args json.RawMessage) string {
	var a struct {
		Command json.RawMessage `json:"command"`
		Cmd     json.RawMessage `json:"cmd"`
	}
	if json.Unmarshal(args, &a) != nil {
		return ""
	}
	for _, raw := range []json.RawMessage{a.Command, a.Cmd} {
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
		var words []string // ["sh", "-c", "…"]: Codex's exec_command
		if json.Unmarshal(raw, &words) == nil && len(words) > 0 {
			return strings.Join(words, " ")
		}
	}
	return ""
}

// oneLine is text on one line, cut to n runes.
func oneLine(text string, n int) string {
	s := strings.Join(strings.Fields(text), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}

// shortID is the id as file names carry it (memory.ShortID), lower case.
func shortID(id string) string { return strings.ToLower(memory.ShortID(id)) }
