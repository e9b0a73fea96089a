package recall

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/render"
)

// Query is what Search looks for, and where.
type Query struct {
	Text string // see matchQuery for what it may hold
	// Filters; "" or zero for any.
	Session string
	Agent   string // the source that captured it: claude-code, codex, gemini-cli, …
	Type    string // episodic, semantic or procedural
	Tool    string
	Since   time.Time
	Until   time.Time
	Project string // a directory: the session's working directory is it or under it
	Failed  bool   // only calls that failed
	Limit   int
}

// DefaultLimit is how many hits a search gives unless told.
const DefaultLimit = 20

// MaxLimit bounds a search's hits.
const MaxLimit = 1000

// maxCounted bounds how far Search counts the hits past those it gives.
const maxCounted = 10000

// Hit is one entry found: an observation or a prompt.
type Hit struct {
	Ref
	Score float64 `json:"score"` // BM25, the lower the better, as SQLite gives it
	// Snippet is where it matched, on one line, each match in **.
	Snippet string `json:"snippet"`
}

// Results are a search's hits, best first, and how many there were in all: Total
// counts up to maxCounted, and More says whether there were more hits than given.
type Results struct {
	Hits  []Hit `json:"hits"`
	Total int   `json:"total"`
	More  bool  `json:"more"`
}

// refColumns are the columns a Ref is read from, of refFrom.
const (
	refColumns = `e.id, e.short, e.session, e.ts, e.event, e.source, e.type, e.tool, e.summary, e.failed,
	e.size, coalesce(r.commit_, ''), coalesce(r.path, ''), coalesce(r.origin, '` + Local + `'), e.line, e.form`
	refFrom = `entries e LEFT JOIN records r ON r.rowid = e.record`
)

type scanner interface{ Scan(...any) error }

func scanRef(s scanner, extra ...any) (Ref, error) {
	var r Ref
	var ts int64
	var failed, size, form int
	err := s.Scan(append([]any{&r.ID, &r.Short, &r.Session, &ts, &r.Event, &r.Source, &r.Type, &r.Tool,
		&r.Summary, &failed, &size, &r.Commit, &r.record, &r.Origin, &r.line, &form}, extra...)...)
	r.Time, r.Failed, r.Tokens = time.Unix(0, ts).UTC(), failed != 0, (size+3)/4
	if form > noFile && form <= len(render.Forms) {
		o := memory.Observation{ID: r.ID, ToolName: r.Tool, MemoryType: memory.Type(r.Type), Timestamp: r.Time}
		r.Path = render.Forms[form-1].Path(&o)
	}
	return r, err
}

// noFile is the form the index keeps of an entry without a markdown file; any other is
// 1 + the index of its render.Form.
const noFile = 0

// Search finds the entries that match q, ranked by relevance (BM25; tool names,
// summaries, errors and file paths count more than arguments and results), never by
// time.
func (m *Memory) Search(q Query) (Results, error) {
	match, words, err := matchQuery(q.Text)
	if err != nil {
		return Results{}, err
	}
	switch {
	case q.Limit == 0:
		q.Limit = DefaultLimit
	case q.Limit < 0 || q.Limit > MaxLimit:
		return Results{}, fmt.Errorf("%w: the limit must be 1 to %d", ErrQuery, MaxLimit)
	}
	// Ranked in the words table alone, and joined to what the hits are after: the join
	// of every match before ranking cost more than the ranking. A session's entries are
	// few, and picked first; other filters are read row by row beside the matches.
	where, args := filters(q)
	matches := `SELECT words.rowid FROM words`
	switch {
	case q.Session != "":
		matches += ` WHERE words MATCH ? AND +words.rowid IN (SELECT e.rowid FROM entries e JOIN sessions s ON s.id = e.session WHERE 1` + where + `)`
	case where != "":
		matches += ` JOIN entries e ON e.rowid = words.rowid JOIN sessions s ON s.id = e.session WHERE words MATCH ?` + where
	default:
		matches += ` WHERE words MATCH ?`
	}
	args = append([]any{match}, args...)
	ranked := strings.Replace(matches, "SELECT words.rowid", "SELECT words.rowid, bm25(words, 4.0, 3.0, 1.0, 1.0, 2.0, 3.0) AS score", 1)
	rows, err := m.Index.db.Query(`SELECT `+refColumns+`, rk.score FROM (`+ranked+` ORDER BY score LIMIT ?) rk
		JOIN entries e ON e.rowid = rk.rowid LEFT JOIN records r ON r.rowid = e.record ORDER BY rk.score`, append(args, q.Limit+1)...)
	if err != nil {
		return Results{}, engineError(err)
	}
	defer rows.Close()
	var res Results
	for rows.Next() {
		var h Hit
		if h.Ref, err = scanRef(rows, &h.Score); err != nil {
			return Results{}, err
		}
		res.Hits = append(res.Hits, h)
	}
	if err := rows.Err(); err != nil {
		return Results{}, engineError(err)
	}
	if res.More = len(res.Hits) > q.Limit; res.More {
		res.Hits = res.Hits[:q.Limit]
		err := m.Index.db.QueryRow(`SELECT count(*) FROM (`+matches+` LIMIT `+fmt.Sprint(maxCounted)+`)`, args...).Scan(&res.Total)
		if err != nil {
			return Results{}, engineError(err)
		}
	} else {
		res.Total = len(res.Hits)
	}
	if err := m.snippets(res.Hits, words); err != nil {
		return Results{}, err
	}
	return res, nil
}

// filters are the SQL conditions of q's filters, and their arguments.
func filters(q Query) (string, []any) {
	var where []string
	var args []any
	add := func(cond string, a ...any) {
		where = append(where, cond)
		args = append(args, a...)
	}
	if q.Session != "" {
		add("e.session = ?", q.Session)
	}
	if q.Agent != "" {
		add("e.source = ?", q.Agent)
	}
	if q.Type != "" {
		add("e.type = ?", q.Type)
	}
	if q.Tool != "" {
		add("e.tool = ?", q.Tool)
	}
	if !q.Since.IsZero() {
		add("e.ts >= ?", q.Since.UnixNano())
	}
	if !q.Until.IsZero() {
		add("e.ts < ?", q.Until.UnixNano())
	}
	if q.Project != "" {
		dir := strings.TrimRight(q.Project, "/")
		add(`(s.cwd = ? OR substr(s.cwd, 1, ?) = ?)`, dir, len(dir)+1, dir+"/")
	}
	if q.Failed {
		add("e.failed = 1")
	}
	if len(where) == 0 {
		return "", nil
	}
	return " AND " + strings.Join(where, " AND "), args
}

// engineError says what the engine refused in a query, in its own words, as a bad
// query: matchQuery writes what the engine takes, so this is rare.
func engineError(err error) error {
	if msg := err.Error(); strings.Contains(msg, "fts5") || strings.Contains(msg, "syntax") {
		return fmt.Errorf("%w: %s", ErrQuery, msg)
	}
	return fmt.Errorf("search index: %w", err)
}

// snippets cuts each hit's snippet from the whole of its entry.
func (m *Memory) snippets(hits []Hit, words []string) error {
	refs := make([]Ref, len(hits))
	for i, h := range hits {
		refs[i] = h.Ref
	}
	entries, err := m.entries(refs)
	if err != nil {
		return err
	}
	for i, e := range entries {
		hits[i].Snippet = snippet(e, words)
	}
	return nil
}

// snippetRunes is about how long a snippet is.
const snippetRunes = 160

// snippet is the part of e's text where the first of words matches, on one line, with
// each match in **: its error, result, arguments and summary, in that order of looking
// (the summary is on the hit's line already). Where no word matches as it is (a prefix,
// or a word the engine folded), it is the start of the error or the result.
func snippet(e memory.Entry, words []string) string {
	var texts []string
	if o := e.Observation; o != nil {
		texts = []string{o.Error, o.ResultText(), string(o.Arguments), o.Summary}
	} else {
		texts = []string{e.Event.Text}
	}
	for _, t := range texts {
		if s, ok := around(t, words); ok {
			return s
		}
	}
	for _, t := range texts {
		if t != "" {
			s, _ := around(t, nil)
			return s
		}
	}
	return ""
}

// around is text on one line, cut to snippetRunes around the first match of words
// (the start when words is nil), with every match in it marked; ok says whether one
// matched.
func around(text string, words []string) (string, bool) {
	flat := strings.Join(strings.FieldsFunc(text, unicode.IsSpace), " ")
	lower := strings.ToLower(flat)
	start := 0
	ok := words == nil
	for _, w := range words {
		if i := wordAt(lower, w, 0); i >= 0 {
			start, ok = max(0, i-snippetRunes/3), true
			break
		}
	}
	if !ok {
		return "", false
	}
	for start > 0 && !utf8.RuneStart(flat[start]) {
		start--
	}
	end := start
	for n := 0; end < len(flat) && n < snippetRunes; n++ {
		_, size := utf8.DecodeRuneInString(flat[end:])
		end += size
	}
	var b strings.Builder
	if start > 0 {
		b.WriteString("…")
	}
	b.WriteString(mark(flat[start:end], lower[start:end], words))
	if end < len(flat) {
		b.WriteString("…")
	}
	return b.String(), true
}

// mark puts ** around each match of words in s, lower being s in lower case (byte for
// byte the same length for the ASCII words the index matches; other text is left as
// it is).
func mark(s, lower string, words []string) string {
	if len(lower) != len(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		matched := 0
		for _, w := range words {
			prefix := strings.HasSuffix(w, "*")
			w = strings.TrimSuffix(w, "*")
			if !strings.HasPrefix(lower[i:], w) || i > 0 && isWordByte(lower[i-1]) {
				continue
			}
			n := len(w)
			for prefix && i+n < len(lower) && isWordByte(lower[i+n]) {
				n++ // the whole word it starts
			}
			if i+n < len(lower) && isWordByte(lower[i+n]) {
				continue // a word it only starts
			}
			matched = max(matched, n)
		}
		if matched == 0 {
			b.WriteByte(s[i])
			i++
			continue
		}
		b.WriteString("**" + s[i:i+matched] + "**")
		i += matched
	}
	return b.String()
}

// wordAt is where w is a word of lower at or after from, or -1; w ending in * is a
// prefix, and may start a longer word.
func wordAt(lower, w string, from int) int {
	w, prefix := strings.CutSuffix(w, "*")
	for from <= len(lower) {
		i := strings.Index(lower[from:], w)
		if i < 0 {
			return -1
		}
		i += from
		end := i + len(w)
		if (i == 0 || !isWordByte(lower[i-1])) && (prefix || end == len(lower) || !isWordByte(lower[end])) {
			return i
		}
		from = i + 1
	}
	return -1
}

func isWordByte(c byte) bool {
	return c >= utf8.RuneSelf || '0' <= c && c <= '9' || 'a' <= c && c <= 'z'
}

// ErrNotFound is an id the memory does not hold.
var ErrNotFound = errors.New("no such entry")
