package recall

import (
	"cmp"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agmem/agmem/capture"
	"github.com/agmem/agmem/memory"
)

// shownID is id as an error says it: an id is 36 characters at most, and what is much
// longer is no id, and said in part.
func shownID(id string) string {
	if len(id) <= 64 {
		return id
	}
	n := 64
	for n > 0 && !utf8.RuneStart(id[n]) {
		n--
	}
	return id[:n] + "…"
}

// Resolve finds the entry an id names: its whole id (a ULID or UUID, in any case), or
// the short id its markdown file's name carries. A short id that names more than one
// entry is an error that lists them.
func (m *Memory) Resolve(id string) (Ref, error) {
	id = strings.TrimSpace(id)
	if norm, err := memory.NormalizeID(id); err == nil {
		found, err := m.named(wholeName(norm), `e.id = ?`, norm)
		if err != nil || len(found) == 0 {
			return Ref{}, cmp.Or(err, fmt.Errorf("%w: %s", ErrNotFound, shownID(id)))
		}
		return found[0], nil
	}
	if id == "" || strings.ContainsFunc(id, func(r rune) bool { return r < '0' || r > 'z' }) {
		return Ref{}, fmt.Errorf("%w: %q is neither an id nor a short id", ErrNotFound, shownID(id))
	}
	short := strings.ToLower(id)
	found, err := m.named(shortName(short), shortIDOf("e.id")+` = ?`, short)
	if err != nil {
		return Ref{}, err
	}
	switch len(found) {
	case 0:
		return Ref{}, fmt.Errorf("%w: %s", ErrNotFound, shownID(id))
	case 1:
		return found[0], nil
	}
	var ids []string
	for _, r := range found {
		ids = append(ids, r.ID)
	}
	return Ref{}, &AmbiguousError{Short: id, IDs: ids}
}

// named are the entries, at most 10 and the earliest, of the rows name gives (of the
// first maxNamed) that meet cond, whose argument is arg. The segments are read again
// first if an update changed them since they were read: an update, this reader's or
// another's, opens none for its readers, while the rows it lists are as it committed
// them.
func (m *Memory) named(name uint64, cond string, arg any) ([]Ref, error) {
	if err := m.Index.loadSegments(); err != nil {
		return nil, err
	}
	rows, err := named(m.Index.segs, name)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	rows = rows[:min(len(rows), maxNamed)]
	args := []any{arg}
	for _, r := range rows {
		args = append(args, r)
	}
	return m.refs(namedQuery(cond, len(rows)), args...)
}

// maxNamed bounds the rows a lookup reads of one name: more share a short id only in a
// record written to (a fetched one), and SQLite takes a bounded number of arguments.
const maxNamed = 1000

// namedQuery is the query of named: the refs of the rows its arguments after cond's
// name, where cond holds.
func namedQuery(cond string, rows int) string {
	return `SELECT ` + refColumns + ` FROM ` + refFrom + ` WHERE ` + cond + ` AND e.rowid IN (` + params(rows) +
		`) ORDER BY e.ts, e.rowid LIMIT 10`
}

// AmbiguousError is a short id that names more than one entry.
type AmbiguousError struct {
	Short string
	IDs   []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("short id %s names %d entries: %s", e.Short, len(e.IDs), strings.Join(e.IDs, ", "))
}

// Shown is one entry whole, with where it is and the prompt that led to it.
type Shown struct {
	Ref
	Entry  memory.Entry
	Prompt string // the session's last prompt before it, "" if none
}

// Show reads each entry ids name, whole.
func (m *Memory) Show(ids []string) ([]Shown, error) {
	var refs []Ref
	for _, id := range ids {
		r, err := m.Resolve(id)
		if err != nil {
			return nil, err
		}
		refs = append(refs, r)
	}
	return m.show(refs)
}

// show reads each entry of refs whole.
func (m *Memory) show(refs []Ref) ([]Shown, error) {
	// The prompts that led to them, read with them.
	prompts := make([]int, len(refs)) // index into refs of each one's prompt, -1 for none
	n := len(refs)
	for i := 0; i < n; i++ {
		prompts[i] = -1
		if refs[i].Event != "" {
			continue
		}
		p, err := scanRef(m.Index.db.QueryRow(`SELECT `+refColumns+` FROM `+refFrom+`
			WHERE `+inSession+` AND e.event = 'UserPromptSubmit' AND e.ts <= ? ORDER BY e.ts DESC LIMIT 1`,
			refs[i].Session, refs[i].Time.UnixNano()))
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, err
		}
		prompts[i] = len(refs)
		refs = append(refs, p)
	}
	entries, err := m.entries(refs)
	if err != nil {
		return nil, err
	}
	out := make([]Shown, n)
	for i := range out {
		out[i] = Shown{Ref: refs[i], Entry: entries[i]}
		p := prompts[i]
		if p < 0 {
			continue
		}
		prompt := entries[p]
		if o := entries[i].Observation; o != nil && o.PromptID != "" && prompt.Event.Attrs["prompt_id"] != "" &&
			prompt.Event.Attrs["prompt_id"] != o.PromptID {
			if prompt, err = m.promptNamed(refs[i], o.PromptID, prompt); err != nil {
				return nil, err
			}
		}
		out[i].Prompt = prompt.Event.Text
	}
	return out, nil
}

// promptsBack bounds how many prompts before a call promptNamed reads for its own.
const promptsBack = 50

// promptNamed is the prompt of ref's session before it whose prompt_id is id, or
// latest when none of the last promptsBack is: the prompt a call came of, when the
// call was recorded after the next prompt (Claude Code runs the hooks of calls in the
// background, and a hook may wait its turn at the journal).
func (m *Memory) promptNamed(ref Ref, id string, latest memory.Entry) (memory.Entry, error) {
	refs, err := m.refs(`SELECT `+refColumns+` FROM `+refFrom+`
		WHERE `+inSession+` AND e.event = 'UserPromptSubmit' AND e.ts <= ? ORDER BY e.ts DESC LIMIT ?`,
		ref.Session, ref.Time.UnixNano(), promptsBack)
	if err != nil {
		return latest, err
	}
	entries, err := m.entries(refs)
	if err != nil {
		return latest, err
	}
	for _, e := range entries {
		if e.Event != nil && e.Event.Attrs["prompt_id"] == id {
			return e, nil
		}
	}
	return latest, nil
}

// ShownOrNot is an entry ShowEach gives, or why it gives none for its id.
type ShownOrNot struct {
	Shown
	Err error // an id that names no entry (ErrNotFound), or more than one (AmbiguousError)
}

// ShowEach is Show of each of ids, in order, where an id that names no entry, or more
// than one, is said in its place: one wrong id does not cost the others. The others are
// read together, one git lookup a record. An entry named twice (an id given again, its
// short id and its whole one) is given once, where it was first named.
func (m *Memory) ShowEach(ids []string) ([]ShownOrNot, error) {
	var out []ShownOrNot
	var good []Ref
	var at []int // of each good id in out
	given := map[string]bool{}
	for _, id := range ids {
		r, err := m.Resolve(id)
		var ambiguous *AmbiguousError
		switch {
		case errors.Is(err, ErrNotFound) || errors.As(err, &ambiguous):
			out = append(out, ShownOrNot{Err: err})
		case err != nil:
			return nil, err
		case given[r.ID]:
		default:
			given[r.ID] = true
			good, at = append(good, r), append(at, len(out))
			out = append(out, ShownOrNot{})
		}
	}
	shown, err := m.show(good)
	for k, sh := range shown {
		out[at[k]].Shown = sh
	}
	return out, err
}

// Timeline is the entry id names among its session's neighbours, before of them before
// it and after after it, prompts and session events with the calls, in time order.
func (m *Memory) Timeline(id string, before, after int) (center Ref, around []Ref, err error) {
	if center, err = m.Resolve(id); err != nil {
		return Ref{}, nil, err
	}
	// Entries at the same time keep the order they were indexed in (rowid).
	rowid, ts := center.row, center.Time.UnixNano()
	earlier, err := m.refs(`SELECT `+refColumns+` FROM `+refFrom+` WHERE `+inSession+` AND (e.ts < ? OR e.ts = ? AND e.rowid < ?)
		ORDER BY e.ts DESC, e.rowid DESC LIMIT ?`, center.Session, ts, ts, rowid, before)
	if err != nil {
		return Ref{}, nil, err
	}
	later, err := m.refs(`SELECT `+refColumns+` FROM `+refFrom+` WHERE `+inSession+` AND (e.ts > ? OR e.ts = ? AND e.rowid > ?)
		ORDER BY e.ts, e.rowid LIMIT ?`, center.Session, ts, ts, rowid, after)
	if err != nil {
		return Ref{}, nil, err
	}
	for i := len(earlier) - 1; i >= 0; i-- {
		around = append(around, earlier[i])
	}
	around = append(append(around, center), later...)
	if err := m.cite(around); err != nil {
		return Ref{}, nil, err
	}
	return around[len(earlier)], around, nil
}

// citedID is the id a line cites an entry by: its short id, the one its file's name
// carries, or where another entry shares that (two UUIDv7s of one millisecond, whose
// short id is their time), its whole id, which show takes as well.
func (m *Memory) citedID(id string) (string, error) {
	short := shortID(id)
	if len(id) == ulidLen { // sixty random bits: no other entry's
		return short, nil
	}
	found, err := m.named(shortName(short), shortIDOf("e.id")+` = ?`, short)
	if err != nil || len(found) < 2 {
		return short, err
	}
	return id, nil
}

// cite gives each of refs the id a line cites it by (citedID) as its Short.
func (m *Memory) cite(refs []Ref) error {
	for i := range refs {
		cited, err := m.citedID(refs[i].ID)
		if err != nil {
			return err
		}
		refs[i].Short = cited
	}
	return nil
}

func (m *Memory) refs(query string, args ...any) ([]Ref, error) {
	rows, err := m.Index.db.Query(query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Ref
	for rows.Next() {
		r, err := scanRef(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// IndexedSession is what the index knows of one session.
type IndexedSession struct {
	ID           string    `json:"id"`
	Agent        string    `json:"agent,omitempty"`
	First        time.Time `json:"first"`
	Last         time.Time `json:"last"`
	Cwd          string    `json:"cwd,omitempty"`
	FirstPrompt  string    `json:"first_prompt,omitempty"`
	Observations int       `json:"observations"`
	Failures     int       `json:"failures"`
	Origin       string    `json:"origin"`
	row          int64     // its row in sessions, which its entries name
	changes      int       // how often entries indexed before changed or went
}

// Sessions are the sessions that worked in project (or under it; "" for any) and that
// agent captured ("" for any), the latest first.
func (m *Memory) Sessions(project, agent string, limit int) ([]IndexedSession, error) {
	return m.SessionsOf(SessionFilter{Project: project, Agent: agent, Limit: limit})
}

// SessionFilter picks sessions: each filter "" or zero for any; a session is in
// [Since, Until) when its last activity is.
type SessionFilter struct {
	Project, Agent string
	Since, Until   time.Time
	Limit, Offset  int
}

// SessionsOf are the sessions f picks, the latest first, past the first f.Offset.
func (m *Memory) SessionsOf(f SessionFilter) ([]IndexedSession, error) {
	where, args := sessionsIn(f.Project, capture.SourceNamed(f.Agent))
	if !f.Since.IsZero() {
		where, args = where+" AND s.last >= ?", append(args, f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		where, args = where+" AND s.last < ?", append(args, f.Until.UnixNano())
	}
	// A session that holds only events (its start, what it was told) did nothing yet.
	// The latest are read first, and only until there are enough: the sessions of a
	// project agents work in now are among the latest of all.
	rows, err := m.Index.db.Query(`SELECT s.rowid, s.id, s.source, s.first, s.last, s.cwd, s.first_prompt, s.observations,
		s.failures, s.origin, s.changes FROM sessions s INDEXED BY sessions_last WHERE `+didSomething+where+`
		ORDER BY s.last DESC, s.id LIMIT ? OFFSET ?`, append(args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []IndexedSession
	for rows.Next() {
		var s IndexedSession
		var first, last int64
		if err := rows.Scan(&s.row, &s.ID, &s.Agent, &first, &last, &s.Cwd, &s.FirstPrompt, &s.Observations, &s.Failures, &s.Origin, &s.changes); err != nil {
			return nil, err
		}
		s.First, s.Last = time.Unix(0, first).UTC(), time.Unix(0, last).UTC()
		out = append(out, s)
	}
	return out, rows.Err()
}
