package recall

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/sessionstart/kept"
)

// The context block is what an agent is told of a project when its session starts:
// the project's most recent sessions, newest first, one line each (when, which agent,
// the first prompt, what was done: files edited, commands run, what failed, and the
// short id of the session's last call, to look at with timeline), then how to learn
// more. The same memory always gives the same bytes, and never more than the bound.

// Context bounds: what a block holds by default, and never more than Claude Code
// takes of a SessionStart hook's context.
const (
	DefaultContextChars = 6000
	MaxContextChars     = 10000
)

// MinContextChars is the least a block may be bounded to: its head and footer, and a
// line.
const MinContextChars = 1000

// contextSessions is how many sessions a block looks at, at most.
const contextSessions = 10

// Context is a block and what it cites.
type Context = kept.Block

// contextFooter ends every block that tells of something: where more is, and the line
// that makes an agent use it (without it, agents ignore what they are told).
const contextFooter = "More of this memory: the agmem MCP tools search, timeline, get_observations and sessions " +
	"(or the agmem search, timeline and show commands).\n" +
	"Before redoing work, search this memory for what was done and what failed.\n"

// Context tells of project's recent sessions (its own and those under it) in at most
// maxChars characters; empty when memory holds nothing of it. A block made before from
// the same sessions, as they are now, is read back rather than made again: the agent
// waits for it.
func (m *Memory) Context(project string, maxChars int) (Context, error) {
	if maxChars < MinContextChars || maxChars > MaxContextChars {
		maxChars = DefaultContextChars
	}
	project = path.Clean(project)
	from, err := m.blockSessions(project)
	if err != nil || len(from.sessions) == 0 {
		return Context{Project: project}, err
	}
	key := from.key(maxChars)
	if block, ok := m.Index.keptBlock(project, maxChars, key); ok {
		return block, nil
	}
	block, lines, err := m.makeContext(project, maxChars, from)
	if err != nil {
		return block, err
	}
	m.Index.keepBlock(project, maxChars, key, block, lines)
	return block, nil
}

// keptBlocks bounds the blocks an index keeps, the latest made: one a project the
// agents start in, and a few more.
const keptBlocks = 64

// keptBlock is the block kept of project in maxChars under key, if there is one.
func (ix *Index) keptBlock(project string, maxChars int, key string) (Context, bool) {
	var data []byte
	err := ix.db.QueryRow(`SELECT block FROM contexts WHERE project = ? AND max_chars = ? AND key = ?`, project, maxChars, key).Scan(&data)
	var block Context
	if err != nil || json.Unmarshal(data, &block) != nil {
		return Context{}, false
	}
	return block, true
}

// keepBlock keeps block, made under key, and the lines made for it, when no other
// process is writing the index: a session's start waits for no writer, and what is not
// kept is only made again.
func (ix *Index) keepBlock(project string, maxChars int, key string, block Context, lines []madeLine) {
	data, err := json.Marshal(block)
	if err != nil {
		return
	}
	ctx := context.Background()
	conn, err := ix.db.Conn(ctx)
	if err != nil {
		return
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "PRAGMA busy_timeout = 0"); err != nil {
		return
	}
	defer conn.ExecContext(ctx, "PRAGMA busy_timeout = "+strconv.Itoa(busyTimeout))
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`INSERT INTO contexts (project, max_chars, key, block, made)
		VALUES (?, ?, ?, ?, (SELECT coalesce(max(made), 0) + 1 FROM contexts))
		ON CONFLICT (project, max_chars) DO UPDATE SET key = excluded.key, block = excluded.block, made = excluded.made`,
		project, maxChars, key, data); err != nil {
		return
	}
	if _, err := tx.Exec(`DELETE FROM contexts WHERE made <= (SELECT made FROM contexts ORDER BY made DESC LIMIT 1 OFFSET ?)`, keptBlocks); err != nil {
		return
	}
	for _, l := range lines {
		cited, err := json.Marshal(l.cited)
		if err != nil {
			return
		}
		if _, err := tx.Exec(`INSERT OR REPLACE INTO lines (session, key, line, cited) VALUES (?, ?, ?, ?)`,
			l.session, l.key, l.line, cited); err != nil {
			return
		}
	}
	tx.Commit()
}

// keptLine is a session's line in a block, and the ids it names, kept under the key of
// what it was made from (lineKey): a block is made again when one of its sessions
// changes, and the lines of the others are read back, not made again.
type keptLine struct {
	line  string
	cited []string
}

// madeLine is a line a block's making made, of the session whose row is session, under
// key.
type madeLine struct {
	session int64
	key     string
	keptLine
}

// lineKey names a session's line as the session is now: what the line tells of, as a
// block's key says.
func lineKey(s IndexedSession) string {
	return fmt.Sprintf("%d %d %d %q %q %q %d %q %d %d %d", kept.Form, lineCalls, s.row, s.ID, s.Agent, s.Origin, s.Last.UnixNano(),
		s.FirstPrompt, s.Observations, s.Failures, s.changes)
}

// keptLines are the lines kept of sessions, by row, under the keys given (by row: a
// hash of the session's lineKey).
func (ix *Index) keptLines(keys map[int64]string) (map[int64]keptLine, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	var args []any
	for row := range keys {
		args = append(args, row)
	}
	rows, err := ix.db.Query(`SELECT session, key, line, cited FROM lines WHERE session IN (`+params(len(args))+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]keptLine{}
	for rows.Next() {
		var row int64
		var key, line, cited string
		if err := rows.Scan(&row, &key, &line, &cited); err != nil {
			return nil, err
		}
		var ids []string
		if keys[row] == key && json.Unmarshal([]byte(cited), &ids) == nil {
			out[row] = keptLine{line, ids}
		}
	}
	return out, rows.Err()
}

// refreshedBlocks bounds the blocks an update makes anew, the latest made: those of the
// projects agents work in now.
const refreshedBlocks = 8

// refreshBlocks makes anew each of the latest kept blocks whose sessions changed since
// it was made: what an update after a flush does, so that the next session start of a
// project in which agents worked meanwhile finds its block made.
func (m *Memory) refreshBlocks() error {
	latest, err := m.Index.latestBlocks()
	if err != nil {
		return err
	}
	for _, k := range latest {
		from, err := m.blockSessions(k.Block.Project)
		if err != nil {
			return err
		}
		if key := from.key(k.MaxChars); key != k.key && len(from.sessions) > 0 {
			block, lines, err := m.makeContext(k.Block.Project, k.MaxChars, from)
			if err != nil {
				return err
			}
			m.Index.keepBlock(k.Block.Project, k.MaxChars, key, block, lines)
		}
	}
	return nil
}

// keptRow is a block the index keeps, and the key it was made under.
type keptRow struct {
	kept.Item
	key string
}

// latestBlocks are the blocks the index keeps that an update makes anew, the latest
// made first.
func (ix *Index) latestBlocks() ([]keptRow, error) {
	rows, err := ix.db.Query(`SELECT project, max_chars, key, block FROM contexts ORDER BY made DESC LIMIT ?`, refreshedBlocks)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []keptRow
	for rows.Next() {
		var k keptRow
		var data []byte
		if err := rows.Scan(&k.Block.Project, &k.MaxChars, &k.key, &data); err != nil {
			return nil, err
		}
		if json.Unmarshal(data, &k.Block) == nil {
			out = append(out, k)
		}
	}
	return out, rows.Err()
}

// KeepForHook writes the kept file (package kept) of the latest blocks kept that are
// what the index says now, unless it is up to date and holds project's block in
// maxChars (when project is not ""): the context hook gives them at a session's start
// without opening the index, while the journal holds nothing new but idle events and
// git's refs are as the file says. The refs are read before the index is, then checked
// indexed, and the journal's place before the blocks: what changes meanwhile is a ref
// or a journal entry newer than the file says, which the hook finds. An index that does
// not hold each tip yet writes nothing.
func (m *Memory) KeepForHook(repo memrepo.Repo, project string, maxChars int) error {
	refs, err := kept.RefsOf(repo.GitDir())
	if err != nil {
		return err
	}
	if indexed, err := m.Index.tipsIndexed(m.git); err != nil || !indexed {
		return err
	}
	f := kept.File{Refs: refs}
	birth, seq, ok, err := journalRead(m.Index.db)
	if err != nil || !ok { // none read yet
		return err
	}
	f.JournalBirth, f.JournalSeq = birth, seq
	if was, err := kept.Read(repo.StateDir()); err == nil && was.Refs == f.Refs && was.JournalBirth == f.JournalBirth &&
		was.JournalSeq == f.JournalSeq && (project == "" || was.Holds(project, maxChars)) {
		return nil
	}
	ids, err := column[string](m.Index.db, `SELECT id FROM sessions INDEXED BY sessions_cwd WHERE `+didSomething)
	if err != nil {
		return err
	}
	f.Did = kept.Did(ids)
	latest, err := m.Index.latestBlocks()
	if err != nil {
		return err
	}
	for _, k := range latest {
		from, err := m.blockSessions(k.Block.Project)
		if err != nil {
			return err
		}
		if len(from.sessions) > 0 && from.key(k.MaxChars) == k.key {
			f.Blocks = append(f.Blocks, k.Item)
		}
	}
	return kept.Write(repo.StateDir(), f)
}

// madeFrom is what a project's block is made from: its latest sessions, and how many
// older ones it leaves out.
type madeFrom struct {
	sessions []IndexedSession
	older    int
}

// blockSessions is what project's block is made from.
func (m *Memory) blockSessions(project string) (madeFrom, error) {
	sessions, err := m.Sessions(project, "", contextSessions+1)
	if err != nil || len(sessions) <= contextSessions {
		return madeFrom{sessions: sessions}, err
	}
	n, err := m.countSessions(project)
	return madeFrom{sessions: sessions[:contextSessions], older: n - contextSessions}, err
}

// key names a block made from these sessions as they are now. A session's line
// changes with its calls: each call recorded changes its count of observations, and
// each one indexed before that changed (or went) its count of changes. The key is read
// before the lines are, from one row a session: a block kept under it was made from
// those sessions as they were then or later, and is made again once they change.
func (f madeFrom) key(maxChars int) string {
	h := sha256.New()
	fmt.Fprintf(h, "%d %d %d\n", kept.Form, maxChars, f.older)
	for _, s := range f.sessions {
		fmt.Fprintln(h, lineKey(s))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// makeContext makes project's block of the sessions it is made from, and returns the
// lines it made (not read back) with it, to keep.
func (m *Memory) makeContext(project string, maxChars int, from madeFrom) (Context, []madeLine, error) {
	out := Context{Project: project}
	sessions, older := from.sessions, from.older
	// The head says how many sessions the block tells of, known once the lines are cut
	// to the bound: they are cut beside the head of all of them, which is no shorter.
	head := func(n int) string {
		return fmt.Sprintf("agmem remembers %d recent session(s) in %s, newest first, times in UTC:\n", n, pathEnd(hint.OneLine(project), maxPathRunes))
	}
	keys := map[int64]string{}
	for _, s := range sessions {
		h := sha256.Sum256([]byte(lineKey(s)))
		keys[s.row] = hex.EncodeToString(h[:])
	}
	was, err := m.Index.keptLines(keys)
	if err != nil {
		return out, nil, err
	}
	var made []madeLine
	var lines []string
	var cited [][]string
	for _, s := range sessions {
		l, ok := was[s.row]
		if !ok {
			if l.line, l.cited, err = m.sessionLine(s); err != nil {
				return out, nil, err
			}
			made = append(made, madeLine{s.row, keys[s.row], l})
		}
		lines = append(lines, l.line)
		cited = append(cited, l.cited)
	}
	text := head(len(sessions))
	told := 0
	for i, line := range lines {
		rest := len(lines) - i - 1 + older
		reserve := chars(contextFooter)
		if rest > 0 {
			reserve += chars(leftOut(rest))
		}
		named := cited[i]
		if chars(text)+chars(line)+reserve > maxChars {
			if i > 0 {
				break
			}
			// One session alone is too long: its line is cut, never the block's bound,
			// and cites what it still names.
			line = cut(line, maxChars-chars(text)-reserve-2) + "…\n"
			named = namedIn(line, named)
		}
		text += line
		told++
		out.Sessions = append(out.Sessions, sessions[i].ID)
		out.Cited = append(out.Cited, named...)
	}
	text = head(told) + strings.TrimPrefix(text, head(len(sessions)))
	if left := len(lines) - told + older; left > 0 {
		text += leftOut(left)
	}
	out.Text = text + contextFooter
	return out, made, nil
}

// countSessions counts the sessions of project.
func (m *Memory) countSessions(project string) (int, error) {
	where, args := sessionsIn(project, "")
	var n int
	err := m.Index.db.QueryRow(`SELECT count(*) FROM sessions s WHERE `+didSomething+where, args...).Scan(&n)
	return n, err
}

// chars is how long s is as Claude Code bounds a hook's context, a JavaScript string's
// length: UTF-16 code units, two for a character past U+FFFF (an emoji), one for any
// other.
func chars(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// cut is the start of s that is at most n chars long.
func cut(s string, n int) string {
	for i, r := range s {
		if n -= utf16.RuneLen(r); n < 0 {
			return s[:i]
		}
	}
	return s
}

// maxPathRunes bounds the project's path in a block's head: a deep path takes no more
// of the block than a session's line.
const maxPathRunes = 200

// pathEnd is p, or its end after "…" when it is longer than n runes.
func pathEnd(p string, n int) string {
	r := []rune(p)
	if len(r) <= n {
		return p
	}
	return "…" + string(r[len(r)-n+1:])
}

func leftOut(n int) string {
	return fmt.Sprintf("(%d older session(s) left out: agmem search finds them)\n", n)
}

// lineCalls bounds the calls a session's line tells of: its latest. The block is given
// at every session start, and one session of 100,000 calls in a project took its block
// from 70 to 278 ms when every call was read (BENCHMARKS.md).
const lineCalls = 500

// sessionLine tells of one session on one line, and returns the ids it names.
func (m *Memory) sessionLine(s IndexedSession) (string, []string, error) {
	rows, err := m.Index.db.Query(`SELECT id, tool, failed, summary, subject FROM (
		SELECT e.id, k.tool, e.failed, e.summary, e.subject, e.ts, e.rowid AS n FROM entries e JOIN kinds k ON k.rowid = e.kind
		WHERE e.session = ? AND e.event = '' ORDER BY e.ts DESC, e.rowid DESC LIMIT ?) ORDER BY ts, n`, s.row, lineCalls)
	if err != nil {
		return "", nil, err
	}
	defer rows.Close()
	var edited, ran []string
	var failures [][2]string // the id and what of each failed call
	var lastID string
	calls := 0
	for rows.Next() {
		var id, tool, summary string
		var stored any
		var fail int
		if err := rows.Scan(&id, &tool, &fail, &summary, &stored); err != nil {
			return "", nil, err
		}
		subject := subjectOf(summary, stored)
		calls++
		lastID = id
		switch {
		case subject == "":
		case isEdit(tool) && fail == 0: // a failed edit changed nothing: it is told as failed
			for f := range strings.Lines(subject) {
				f = strings.TrimSuffix(f, "\n")
				if !path.IsAbs(f) && path.IsAbs(s.Cwd) { // one file, whichever way a call named it
					f = path.Join(s.Cwd, f)
				}
				edited = appendOnce(edited, f)
			}
		case isCommand(tool):
			ran = appendOnce(ran, subject)
		}
		if fail != 0 {
			what := strings.ReplaceAll(subject, "\n", ", ")
			if what == "" {
				what = tool
			}
			failures = append(failures, [2]string{id, what})
		}
	}
	if err := rows.Err(); err != nil {
		return "", nil, err
	}
	// The index's one connection, which citedID asks, is the rows' until they close.
	rows.Close()
	var failed, failedIDs []string // each failure told, and its call's id
	for _, f := range failures {
		cited, err := m.citedID(f[0])
		if err != nil {
			return "", nil, err
		}
		if item := cited + " " + f[1]; !slices.Contains(failed, item) {
			failed, failedIDs = append(failed, item), append(failedIDs, f[0])
		}
	}
	var b strings.Builder
	of := "" // the calls what was done is told of, when not all of them
	if calls == lineCalls && s.Observations > calls {
		calls, of = s.Observations, fmt.Sprintf("in the last %d calls: ", lineCalls)
	}
	fmt.Fprintf(&b, "- %s %s%s, %d call(s)", s.Last.Format("2006-01-02 15:04"), orUnknown(s.Agent), fromElsewhere(s.Origin), calls)
	if s.FirstPrompt != "" {
		fmt.Fprintf(&b, ": %q", oneLine(s.FirstPrompt, 120))
	}
	var done []string
	if len(edited) > 0 {
		names := shortPaths(edited)
		for i, name := range names {
			names[i] = pathEnd(name, maxNameRunes) // a long path keeps its file's name
		}
		done = append(done, "edited "+list(names, 6))
	}
	if len(ran) > 0 {
		done = append(done, "ran "+list(ran, 4))
	}
	var ids []string // those the line names, in its order
	if len(failed) > 0 {
		done = append(done, "failed: "+list(failed, shownFailures))
		ids = append(ids, failedIDs[:min(shownFailures, len(failedIDs))]...)
	}
	if len(done) > 0 {
		b.WriteString(" — " + of + strings.Join(done, "; "))
	}
	// The line is cut at lineRunes, its last call kept; it cites none of the ids the cut
	// took.
	last := ""
	if lastID != "" {
		cited, err := m.citedID(lastID)
		if err != nil {
			return "", nil, err
		}
		last = fmt.Sprintf(" [last call %s]", cited)
		ids = appendOnce(ids, lastID)
	}
	line := oneLine(b.String(), lineRunes-utf8.RuneCountInString(last)) + last
	return line + "\n", namedIn(line, ids), nil
}

// namedIn is those of ids that line names, by their short ids or whole (citedID), in
// their order: what a line cut short still cites.
func namedIn(line string, ids []string) []string {
	return slices.DeleteFunc(slices.Clone(ids), func(id string) bool {
		return !strings.Contains(line, shortID(id)) && !strings.Contains(line, id)
	})
}

// shownFailures bounds the failed calls a session's line names, and lineRunes the line.
const (
	shownFailures = 3
	lineRunes     = 600
)

// fromElsewhere says where a session another memory repo recorded came from (its
// branch, as fetched): the agent told of it is told it is not its own repo's.
func fromElsewhere(origin string) string {
	if origin == "" || origin == Local {
		return ""
	}
	return " (from " + origin + ")"
}

func orUnknown(s string) string {
	if s == "" {
		return "an agent"
	}
	return s
}

// list is items joined, at most n of them, and how many more.
func list(items []string, n int) string {
	quoted := make([]string, 0, n)
	for _, it := range items[:min(n, len(items))] {
		quoted = append(quoted, oneLine(it, maxNameRunes))
	}
	s := strings.Join(quoted, ", ")
	if len(items) > n {
		s += fmt.Sprintf(" and %d more", len(items)-n)
	}
	return s
}

// maxNameRunes bounds a name in a session's line (list cuts there too, at the end).
const maxNameRunes = 60

// shortPaths names each of paths (each once) by its base name, or by as many of its
// last elements as tell it from the others: src/cart.ts and test/cart.ts, where both
// were edited, not cart.ts twice.
func shortPaths(paths []string) []string {
	depth := make([]int, len(paths))
	names := make([]string, len(paths))
	for {
		seen := map[string][]int{}
		for i, p := range paths {
			names[i] = lastElements(p, depth[i]+1)
			seen[names[i]] = append(seen[names[i]], i)
		}
		longer := false
		for _, same := range seen {
			for _, i := range same {
				if len(same) > 1 && names[i] != paths[i] {
					depth[i]++
					longer = true
				}
			}
		}
		if !longer {
			return names
		}
	}
}

// lastElements is the last n elements of p, or p when it has no more.
func lastElements(p string, n int) string {
	i := len(p)
	for ; n > 0; n-- {
		j := strings.LastIndexByte(p[:i], '/')
		if j <= 0 {
			return p
		}
		i = j
	}
	return p[i+1:]
}

func appendOnce(items []string, s string) []string {
	if slices.Contains(items, s) {
		return items
	}
	return append(items, s)
}

// isEdit and isCommand tell by a tool's name whether it changes files or runs commands,
// for the agents agmem knows.
func isEdit(tool string) bool {
	switch strings.ToLower(lastName(tool)) {
	case "edit", "multiedit", "write", "notebookedit", "replace", "write_file", "apply_patch", "edit_file",
		"create_file", "search_replace", "strreplace":
		return true
	}
	return false
}

func isCommand(tool string) bool {
	switch strings.ToLower(lastName(tool)) {
	case "bash", "shell", "run_shell_command", "exec_command", "run_command", "run_terminal_cmd", "terminal":
		return true
	}
	return false
}

// lastName is an MCP tool's own name (mcp__server__tool), or the name.
func lastName(tool string) string {
	if i := strings.LastIndex(tool, "__"); strings.HasPrefix(tool, "mcp__") && i > 4 {
		return tool[i+2:]
	}
	return tool
}
