package recall

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf16"
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
type Context struct {
	Project  string   `json:"project"`
	Text     string   `json:"context"`
	Sessions []string `json:"sessions"` // the sessions it tells of
	Cited    []string `json:"cited"`    // the ids of the entries it names
}

// contextFooter ends every block that tells of something: where more is, and the line
// that makes an agent use it (without it, agents ignore what they are told).
const contextFooter = "More of this memory: the agmem MCP tools search, timeline, get_observations and sessions " +
	"(or the agmem search, timeline and show commands).\n" +
	"Before redoing work, search this memory for what was done and what failed.\n"

// Context tells of project's recent sessions (its own and those under it) in at most
// maxChars characters; empty when memory holds nothing of it.
func (m *Memory) Context(project string, maxChars int) (Context, error) {
	if maxChars < MinContextChars || maxChars > MaxContextChars {
		maxChars = DefaultContextChars
	}
	project = path.Clean(project)
	out := Context{Project: project}
	sessions, err := m.Sessions(project, "", contextSessions+1)
	if err != nil {
		return out, err
	}
	if len(sessions) == 0 {
		return out, nil
	}
	older := 0 // past the sessions a block looks at
	if len(sessions) > contextSessions {
		sessions = sessions[:contextSessions]
		if older, err = m.countSessions(project); err != nil {
			return out, err
		}
		older -= contextSessions
	}
	// The head says how many sessions the block tells of, known once the lines are cut
	// to the bound: they are cut beside the head of all of them, which is no shorter.
	head := func(n int) string {
		return fmt.Sprintf("agmem remembers %d recent session(s) in %s, newest first:\n", n, pathEnd(project, maxPathRunes))
	}
	var lines []string
	var cited [][]string
	for _, s := range sessions {
		line, ids, err := m.sessionLine(s)
		if err != nil {
			return out, err
		}
		lines = append(lines, line)
		cited = append(cited, ids)
	}
	text := head(len(sessions))
	told := 0
	for i, line := range lines {
		rest := len(lines) - i - 1 + older
		reserve := chars(contextFooter)
		if rest > 0 {
			reserve += chars(leftOut(rest))
		}
		if chars(text)+chars(line)+reserve > maxChars {
			if i > 0 {
				break
			}
			// One session alone is too long: its line is cut, never the block's bound.
			line = cut(line, maxChars-chars(text)-reserve-2) + "…\n"
		}
		text += line
		told++
		out.Sessions = append(out.Sessions, sessions[i].ID)
		out.Cited = append(out.Cited, cited[i]...)
	}
	text = head(told) + strings.TrimPrefix(text, head(len(sessions)))
	if left := len(lines) - told + older; left > 0 {
		text += leftOut(left)
	}
	out.Text = text + contextFooter
	return out, nil
}

// countSessions counts the sessions of project.
func (m *Memory) countSessions(project string) (int, error) {
	where, args := filters(Query{Project: project})
	var n int
	err := m.Index.db.QueryRow(`SELECT count(*) FROM sessions s WHERE (s.observations > 0 OR s.first_prompt <> '')`+where, args...).Scan(&n)
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
	rows, err := m.Index.db.Query(`SELECT id, tool, failed, subject FROM (
		SELECT e.id, e.tool, e.failed, e.subject, e.ts, e.rowid AS n FROM entries e
		WHERE e.session = ? AND e.event = '' ORDER BY e.ts DESC, e.rowid DESC LIMIT ?) ORDER BY ts, n`, s.row, lineCalls)
	if err != nil {
		return "", nil, err
	}
	defer rows.Close()
	var edited, ran, failed []string
	var lastID string
	calls := 0
	for rows.Next() {
		var id, tool, subject string
		var fail int
		if err := rows.Scan(&id, &tool, &fail, &subject); err != nil {
			return "", nil, err
		}
		calls++
		lastID = id
		switch {
		case subject == "":
		case isEdit(tool):
			for f := range strings.Lines(subject) {
				edited = appendOnce(edited, path.Base(strings.TrimSuffix(f, "\n")))
			}
		case isCommand(tool):
			ran = appendOnce(ran, subject)
		}
		if fail != 0 {
			what := strings.ReplaceAll(subject, "\n", ", ")
			if what == "" {
				what = tool
			}
			failed = appendOnce(failed, shortID(id)+" "+what)
		}
	}
	if err := rows.Err(); err != nil {
		return "", nil, err
	}
	var b strings.Builder
	of := "" // the calls what was done is told of, when not all of them
	if calls == lineCalls && s.Observations > calls {
		calls, of = s.Observations, fmt.Sprintf("in the last %d calls: ", lineCalls)
	}
	fmt.Fprintf(&b, "- %s %s, %d call(s)", s.Last.Format("2006-01-02 15:04"), orUnknown(s.Agent), calls)
	if s.FirstPrompt != "" {
		fmt.Fprintf(&b, ": %q", oneLine(s.FirstPrompt, 120))
	}
	var done []string
	if len(edited) > 0 {
		done = append(done, "edited "+list(edited, 6))
	}
	if len(ran) > 0 {
		done = append(done, "ran "+list(ran, 4))
	}
	if len(failed) > 0 {
		done = append(done, "failed: "+list(failed, 3))
	}
	if len(done) > 0 {
		b.WriteString(" — " + of + strings.Join(done, "; "))
	}
	var ids []string
	if lastID != "" {
		fmt.Fprintf(&b, " [last call %s]", shortID(lastID))
		ids = append(ids, lastID)
	}
	b.WriteString("\n")
	return oneLine(b.String(), 600) + "\n", ids, nil
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
		quoted = append(quoted, oneLine(it, 60))
	}
	s := strings.Join(quoted, ", ")
	if len(items) > n {
		s += fmt.Sprintf(" and %d more", len(items)-n)
	}
	return s
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
