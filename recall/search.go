package recall

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/agmem/agmem/capture"
	"github.com/agmem/agmem/internal/fulltext"
	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/jsonscan"
	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/render"
)

// ErrQuery is a query the index cannot take; the error says why.
var ErrQuery = fulltext.ErrQuery

// ErrNoType is a memory type filter that names none.
var ErrNoType = errors.New("not a memory type")

// ErrNoTime is a query whose since and until leave no time in between.
var ErrNoTime = errors.New("no time is in between")

// Query is what Search looks for, and where.
type Query struct {
	Text string // see fulltext.Parse for what it may hold
	// Filters; "" or zero for any.
	Session string
	Agent   string // the source that captured it: claude-code, codex, gemini-cli, …
	Type    string // episodic, semantic or procedural
	Tool    string
	Since   time.Time
	Until   time.Time
	Project string // a directory (relative to the working directory): the session's working directory is it or under it
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
	Score float64 `json:"score"` // BM25: the higher, the better
	// Snippet is where it matched, on one line, each match in **.
	Snippet string `json:"snippet"`
}

// Results are a search's hits, best first, and how many there were in all: Total
// counts up to maxCounted, and More says whether there were more hits than given. A
// search that found nothing says why where it can (unmatched).
type Results struct {
	Hits      []Hit  `json:"hits"`
	Total     int    `json:"total"`
	More      bool   `json:"more"`
	Unmatched string `json:"unmatched,omitempty"`
	// AnyWord says that no entry held every word of the query, and the hits are those
	// that hold some of them, best first (fulltext.Query.AnyWord).
	AnyWord bool `json:"any_word,omitempty"`
}

// Uncounted says the hits were counted only as far as maxCounted: there may be more
// than Total.
func (r Results) Uncounted() bool { return r.Total >= maxCounted }

// refColumns are the columns a Ref is read from, of refFrom.
const (
	refColumns = `e.id, sn.id, e.ts, e.event, k.source, k.type, k.tool, e.summary, e.failed,
	e.size, coalesce(r.commit_, ''), coalesce(r.path, ''), coalesce(r.origin, '` + Local + `'), e.line, e.form, e.md, e.rowid`
	refFrom = `entries e JOIN sessions sn ON sn.rowid = e.session JOIN kinds k ON k.rowid = e.kind
	LEFT JOIN records r ON r.rowid = e.record`
)

type scanner interface{ Scan(...any) error }

func scanRef(s scanner) (Ref, error) {
	var r Ref
	var ts int64
	var failed, size, form int
	err := s.Scan(&r.ID, &r.Session, &ts, &r.Event, &r.Source, &r.Type, &r.Tool,
		&r.Summary, &failed, &size, &r.Commit, &r.record, &r.Origin, &r.line, &form, &r.md, &r.row)
	r.Time, r.Failed, r.Tokens = time.Unix(0, ts).UTC(), failed != 0, size
	if err != nil {
		return r, err
	}
	r.Short = shortID(r.ID)
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
	query, err := fulltext.Parse(q.Text)
	if err != nil {
		return Results{}, err
	}
	if _, ok := memory.ParseType(q.Type); !ok && q.Type != "" {
		return Results{}, fmt.Errorf("type %q is %w: give episodic, semantic or procedural", q.Type, ErrNoType)
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Since.Before(q.Until) {
		return Results{}, fmt.Errorf("%w: since %s is not before until %s", ErrNoTime,
			q.Since.Format(time.RFC3339), q.Until.Format(time.RFC3339))
	}
	switch {
	case q.Limit == 0:
		q.Limit = DefaultLimit
	case q.Limit < 0 || q.Limit > MaxLimit:
		return Results{}, fmt.Errorf("%w: the limit must be 1 to %d", ErrQuery, MaxLimit)
	}
	res, err := m.searchMended(q, query)
	if err != nil || res.Total > 0 {
		return res, err
	}
	if relaxed, ok := query.AnyWord(); ok {
		// A question typed whole, as agents ask their memory: what holds some of its
		// words, its rarer ones first, rather than nothing.
		if some, err := m.searchMended(q, relaxed); err != nil || some.Total > 0 {
			some.AnyWord = true
			return some, err
		}
	}
	return res, nil
}

// searchMended is search, and where it finds the index damaged only now, reading a
// segment's postings or the rows they name, search again: first with the segments
// read anew (another update may have swept one as this read their list), then with
// the index made anew.
func (m *Memory) searchMended(q Query, query *fulltext.Query) (Results, error) {
	res, err := m.search(q, query)
	for try := 0; damaged(err) && try < 2; try++ {
		if try == 0 {
			m.Index.closeSegments()
		} else if err := m.remake(); err != nil {
			return Results{}, err
		}
		res, err = m.search(q, query)
	}
	return res, err
}

// search is Search of a query checked and parsed.
func (m *Memory) search(q Query, query *fulltext.Query) (Results, error) {
	filter, none, err := m.filter(q)
	if err != nil {
		return Results{}, err
	}
	var res Results
	if !none {
		found, err := m.Index.search(query, fulltext.Options{Weights: weights, Limit: q.Limit, MaxCount: maxCounted, Filter: filter})
		if err != nil {
			return Results{}, err
		}
		res = Results{Total: found.Total, More: found.More}
		if res.Hits, err = m.hits(found.Hits); err != nil {
			return Results{}, err
		}
		for i := range res.Hits {
			if res.Hits[i].Short, err = m.citedID(res.Hits[i].ID); err != nil {
				return Results{}, err
			}
		}
		if err := m.snippets(res.Hits, query.Words); err != nil {
			return Results{}, err
		}
	}
	if res.Total == 0 {
		if res.Unmatched, err = m.Unmatched(q); err != nil {
			return Results{}, err
		}
	}
	return res, nil
}

// search searches the index's segments, opened again first if an update changed them
// since (Refresh's, which opens none).
func (ix *Index) search(q *fulltext.Query, o fulltext.Options) (fulltext.Result, error) {
	if err := ix.loadSegments(); err != nil {
		return fulltext.Result{}, hint.With(fmt.Errorf("search index: %w", err), `run "agmem index --rebuild"`)
	}
	segs := make([]*fulltext.Segment, len(ix.segs))
	for i, s := range ix.segs {
		segs[i] = s.Segment
	}
	res, err := fulltext.Search(segs, q, o)
	if err != nil {
		return res, hint.With(fmt.Errorf("search index: %w", err), `run "agmem index --rebuild"`)
	}
	return res, nil
}

// filter is q's filters as the engine takes them; none says that nothing can pass them.
func (m *Memory) filter(q Query) (f fulltext.Filter, none bool, err error) {
	f.Keys = make([][]string, keys)
	one := func(key int, v string) {
		if v != "" {
			f.Keys[key] = []string{v}
		}
	}
	one(keySource, capture.SourceNamed(q.Agent)) // claude is claude-code, as hooks name it
	one(keyType, q.Type)
	one(keyTool, q.Tool)
	one(keySession, q.Session)
	if q.Failed {
		f.Keys[keyFailed] = []string{"1"}
	}
	if !q.Since.IsZero() {
		f.From = q.Since.UnixNano()
	}
	if !q.Until.IsZero() {
		f.To = q.Until.UnixNano()
	}
	if q.Project == "" {
		return f, false, nil
	}
	where, args := sessionsIn(q.Project, "")
	rows, err := m.Index.db.Query(`SELECT s.id FROM sessions s WHERE TRUE`+where, args...)
	if err != nil {
		return f, false, err
	}
	defer rows.Close()
	var in []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return f, false, err
		}
		if q.Session == "" || id == q.Session {
			in = append(in, id)
		}
	}
	f.Keys[keySession] = in
	return f, len(in) == 0, rows.Err()
}

// Unmatched says of a search (or a listing) that found nothing which of its filters
// name nothing the memory holds, and what it holds instead where that helps ("no agent
// \"claude\": the agents are claude-code, codex"); "" when each names something, and
// nothing matched them all.
func (m *Memory) Unmatched(q Query) (string, error) {
	var says []string
	db := m.Index.db
	if q.Agent != "" {
		agents, err := column[string](db, `SELECT DISTINCT source FROM kinds WHERE source <> '' ORDER BY source`)
		if err != nil {
			return "", err
		}
		switch {
		case len(agents) == 0:
			says = append(says, fmt.Sprintf("no agent %q: the memory holds no agent's work yet", q.Agent))
		case !slices.Contains(agents, capture.SourceNamed(q.Agent)):
			says = append(says, fmt.Sprintf("no agent %q: the agents are %s", q.Agent, strings.Join(agents, ", ")))
		}
	}
	if q.Tool != "" {
		tools, err := column[string](db, `SELECT DISTINCT tool FROM kinds WHERE tool = ? COLLATE NOCASE ORDER BY tool`, q.Tool)
		switch {
		case err != nil:
			return "", err
		case len(tools) == 0:
			says = append(says, fmt.Sprintf("no tool %q", q.Tool))
		case !slices.Contains(tools, q.Tool):
			says = append(says, fmt.Sprintf("no tool %q, but %s (a tool is named as its agent names it)", q.Tool, strings.Join(tools, ", ")))
		}
	}
	if q.Session != "" {
		ids, err := column[string](db, `SELECT id FROM sessions WHERE id = ?`, q.Session)
		if err != nil {
			return "", err
		}
		if len(ids) == 0 {
			says = append(says, fmt.Sprintf("no session %q (give its whole id)", q.Session))
		}
	}
	if q.Project != "" {
		where, args := sessionsIn(q.Project, "")
		ids, err := column[string](db, `SELECT s.id FROM sessions s WHERE TRUE`+where+` LIMIT 1`, args...)
		if err != nil {
			return "", err
		}
		if len(ids) == 0 {
			says = append(says, fmt.Sprintf("no session worked in %s or under it", projectDir(q.Project)))
		}
	}
	return strings.Join(says, "; "), nil
}

// hits are the entries of the engine's hits, in their order.
func (m *Memory) hits(found []fulltext.Hit) ([]Hit, error) {
	if len(found) == 0 {
		return nil, nil
	}
	at := map[int64]int{}
	args := make([]any, len(found))
	for i, h := range found {
		at[h.ID], args[i] = i, h.ID
	}
	rows, err := m.Index.db.Query(`SELECT `+refColumns+` FROM `+refFrom+` WHERE e.rowid IN (`+params(len(found))+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]Hit, len(found))
	seen := 0
	for rows.Next() {
		ref, err := scanRef(rows)
		if err != nil {
			return nil, err
		}
		i := at[ref.row]
		out[i] = Hit{Ref: ref, Score: found[i].Score}
		seen++
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if seen != len(found) {
		return nil, hint.With(fmt.Errorf("search index: %w: %d of %d hits are not in its entries", errDamaged, len(found)-seen, len(found)),
			`run "agmem index --rebuild"`)
	}
	return out, nil
}

// sessionsIn is the condition on sessions (s) that they worked in project (or under
// it) and are agent's, each "" for any, as " AND …", and its arguments. A search
// filters entries in the engine (Memory.filter), not in SQL.
func sessionsIn(project, agent string) (string, []any) {
	var where string
	var args []any
	if project != "" {
		var conds []string
		for _, dir := range projectDirs(project) {
			cond, dirArgs := inDir("d.cwd", dir)
			conds, args = append(conds, cond), append(args, dirArgs...)
		}
		where += " AND s.rowid IN (SELECT d.session FROM dirs d WHERE " + strings.Join(conds, " OR ") + ")"
	}
	if agent != "" {
		where, args = where+" AND s.source = ?", append(args, agent)
	}
	return where, args
}

// TimeForms says the forms of a time ParseTime reads, for a hint.
const TimeForms = "2026-11-30, 2026-11-30T09:00 (UTC, as a date is), 2026-11-30T09:00+01:00, or how long ago: 90m, 36h, 7d"

// timeLayouts are the times ParseTime reads: RFC 3339, and the same to the minute, and
// without a zone (UTC, as a date is), and a date.
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00", "2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02"}

// ParseTime reads a time a filter names: one of timeLayouts, or how long before now
// ("90m", "36h", "7d"). "" is the zero time; ok is false for what is none of these. A
// time past what the index can hold (Unix nanoseconds: 1677 to 2262) is the nearest
// it can, so that such a bound leaves out nothing rather than everything.
func ParseTime(s string, now time.Time) (t time.Time, ok bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, true
	}
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, strings.ToUpper(s)); err == nil { // RFC 3339 allows t and z
			return held(t), true
		}
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			if n > int(math.MaxInt64/int64(24*time.Hour)) {
				return earliest, true
			}
			return held(now.Add(-time.Duration(n) * 24 * time.Hour)), true
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return held(now.Add(-d)), true
	}
	return time.Time{}, false
}

// earliest and latest are the times the index can hold.
var earliest, latest = time.Unix(0, math.MinInt64).UTC(), time.Unix(0, math.MaxInt64).UTC()

func held(t time.Time) time.Time {
	switch {
	case t.Before(earliest):
		return earliest
	case t.After(latest):
		return latest
	}
	return t
}

// inDir is the condition that the directory in column is dir or under it. It compares
// bytes, as SQLite compares text: those under dir are from dir+"/" up to dir+"0", '/'
// and '0' being neighbours (substr counts characters, not the bytes len does). It is
// one range, from dir up to dir+"0", that an index of column reads alone, and in it
// dir itself or what is past dir+"/".
func inDir(column, dir string) (string, []any) {
	return `(` + column + ` >= ? AND ` + column + ` < ? AND (` + column + ` = ? OR ` + column + ` >= ?))`,
		[]any{dir, dir + "0", dir, dir + "/"}
}

// projectDir is the directory a project filter names, as sessions' working directories
// are kept: absolute, without a trailing slash ("" for the root, which holds them all).
func projectDir(project string) string {
	if abs, err := filepath.Abs(project); err == nil {
		project = abs
	}
	return strings.TrimRight(project, "/")
}

// projectDirs are projectDir, and the directory it is a link to, or under one to, when
// it is: agents record where they work with its links resolved (getcwd), and a shell in
// a linked directory names it by the link.
func projectDirs(project string) []string {
	dir := projectDir(project)
	if real, err := filepath.EvalSymlinks(dir); err == nil && strings.TrimRight(real, "/") != dir {
		return []string{dir, strings.TrimRight(real, "/")}
	}
	return []string{dir}
}

// snippets cuts each hit's snippet from the whole of its entry.
func (m *Memory) snippets(hits []Hit, words []string) error {
	// A committed observation's markdown file shows its arguments and the start of its
	// error and result: a blob of a few kilobytes, where its session record is a blob
	// of all the session's entries. The whole entry is read only where the file does
	// not show a match.
	var refs []Ref
	var at []int
	for i, texts := range m.allShown(hits) {
		if texts != nil {
			if s, ok := matchIn(texts, words); ok {
				hits[i].Snippet = s
				continue
			}
		}
		refs, at = append(refs, hits[i].Ref), append(at, i)
	}
	entries, err := m.entries(refs)
	if err != nil {
		return err
	}
	for i, e := range entries {
		hits[at[i]].Snippet = snippet(e, words)
	}
	return nil
}

// shown are the texts the markdown file of a committed observation shows, in the
// order snippets look at them, or nil where there is no such file to read: read by the
// start of its blob's hash, which the index keeps, not by its path, which takes a read
// of each tree on the way, in a commit of its own. A fetched branch's file is not read:
// another agmem wrote it, and its entry is given back redacted again (fromFetched).
func (m *Memory) shown(r Ref) []string {
	if r.Commit == "" || len(r.md) == 0 || r.Origin != Local {
		return nil
	}
	// The index keeps the start of the hash: where no pack holds one object of that
	// start (a loose object, or a rare second of that start), the record is read.
	h, ok, err := m.git.PackedWithPrefix(r.md)
	if !ok || err != nil {
		return nil
	}
	rc, err := m.git.OpenBlob(h)
	if err != nil {
		return nil
	}
	defer rc.Close()
	md, err := io.ReadAll(io.LimitReader(rc, maxMarkdown))
	if err != nil {
		return nil
	}
	args, errText, result, ok := render.Sections(md)
	if !ok {
		return nil
	}
	// As snippet reads the entry's (readable): the arguments are JSON, and so is a
	// result the file shows as an object or an array (what follows its bracket starts a
	// JSON value); not one of text that starts with a bracket ("[main 1a2b3c] fix \n").
	args = string(jsonscan.AppendText(nil, []byte(args)))
	if len(result) > 1 && (result[0] == '{' || result[0] == '[') && strings.IndexByte(`"{}[]-0123456789ntf`, result[1]) >= 0 {
		result = string(jsonscan.AppendText(nil, []byte(result)))
	}
	return []string{errText, result, args, r.Summary}
}

// allShown is shown of each hit, read on every CPU (onCPUs): the blobs of a page of
// hits, most of them deltas at the ends of chains of other blobs, were a fifth of a
// search's time read one after another.
func (m *Memory) allShown(hits []Hit) [][]string {
	out := make([][]string, len(hits))
	onCPUs(len(hits), func(i int) { out[i] = m.shown(hits[i].Ref) })
	return out
}

// onCPUs calls fn with each of 0 to n-1, on as many goroutines as there are CPUs, and
// returns once every call has; a call's panic is raised again here, where the command
// that called it recovers from it. What git holds is read that way: vcs's caches,
// indexes of packs and go-git's storage are locked.
func onCPUs(n int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var panicked atomic.Pointer[any]
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					panicked.CompareAndSwap(nil, &p)
				}
			}()
			for i := int(next.Add(1) - 1); i < n && panicked.Load() == nil; i = int(next.Add(1) - 1) {
				fn(i)
			}
		})
	}
	wg.Wait()
	if p := panicked.Load(); p != nil {
		panic(*p)
	}
}

// maxMarkdown bounds what is read of a markdown file for a snippet: its previews keep it
// to a few kilobytes, but for arguments.
const maxMarkdown = 1 << 20

// snippetRunes is about how long a snippet is.
const snippetRunes = 160

// snippet is the part of e's text where the first of words matches, on one line, with
// each match in **: its error, result, arguments and summary, in that order of looking
// (the summary is on the hit's line already). Where no word matches as it is (a prefix,
// or a word the engine folded), it is the start of the error or the result.
func snippet(e memory.Entry, words []string) string {
	var texts []string
	if o := e.Observation; o != nil {
		texts = []string{o.Error, readable(o.Result), readable(o.Arguments), o.Summary}
	} else {
		texts = []string{e.Event.Text}
	}
	if s, ok := matchIn(texts, words); ok {
		return s
	}
	for _, t := range texts {
		if t != "" {
			s, _ := around(t, nil)
			return s
		}
	}
	return ""
}

// matchIn is the snippet of the first of texts where one of words matches.
func matchIn(texts []string, words []string) (string, bool) {
	for _, t := range texts {
		if s, ok := around(t, words); ok {
			return s, true
		}
	}
	return "", false
}

// around is text on one line, cut to snippetRunes around the first match of words
// (the start when words is nil), with every match in it marked; ok says whether one
// matched. A match is a term of the text as the index reads it (fulltext.Terms: case
// and diacritics aside, café matching cafe) that is one of words, or that one ending
// in * starts.
func around(text string, words []string) (string, bool) {
	flat := hint.OneLine(text) // nothing in it drives a terminal, wherever it is shown
	start := 0
	if words != nil {
		first := firstMatch(flat, words)
		if first < 0 {
			return "", false
		}
		start = max(0, first-snippetRunes/3)
	}
	for start > 0 && !utf8.RuneStart(flat[start]) {
		start--
	}
	end := start
	for n := 0; end < len(flat) && n < snippetRunes; n++ {
		_, size := utf8.DecodeRuneInString(flat[end:])
		end += size
	}
	// A word the snippet's ends cut through is no match, whatever is left of it.
	before, _ := utf8.DecodeLastRuneInString(flat[:start])
	after, _ := utf8.DecodeRuneInString(flat[end:])
	cutStart, cutEnd := start > 0 && fulltext.InTerm(before), end < len(flat) && fulltext.InTerm(after)
	var b strings.Builder
	if start > 0 {
		b.WriteString("…")
	}
	at, from, to := start, -1, -1 // what is written, and the mark being made
	mark := func() {
		if from >= 0 {
			b.WriteString(flat[at:from])
			b.WriteString("**" + flat[from:to] + "**")
			at = to
		}
	}
	fulltext.Terms(flat[start:end], func(term string, s, e int) bool {
		if !(s == 0 && cutStart) && !(start+e == end && cutEnd) && matches(term, words) {
			if start+s > to { // terms in pairs (日本 本語) overlap: one mark holds both
				mark()
				from = start + s
			}
			to = start + e
		}
		return true
	})
	mark()
	b.WriteString(flat[at:end])
	if end < len(flat) {
		b.WriteString("…")
	}
	return b.String(), true
}

// firstMatch is where the first term of text that matches words starts, or -1. A text
// all ASCII, as most are, is searched for the words in lower case rather than read term
// by term, which took three times as long: in ASCII a term is a run of letters and
// digits in lower case, its first MaxTermBytes.
func firstMatch(text string, words []string) int {
	first := -1
	if !isASCII(text) {
		fulltext.Terms(text, func(term string, at, _ int) bool {
			if matches(term, words) {
				first = at
			}
			return first < 0
		})
		return first
	}
	lower := strings.ToLower(text)
	for _, w := range words {
		w, prefix := strings.CutSuffix(w, "*")
		for from := 0; w != "" && (first < 0 || from < first); {
			i := strings.Index(lower[from:], w)
			if i < 0 {
				break
			}
			i += from
			end := i + len(w)
			if (i == 0 || !fulltext.InTerm(rune(lower[i-1]))) && (prefix || len(w) >= fulltext.MaxTermBytes || end == len(lower) || !fulltext.InTerm(rune(lower[end]))) {
				if first < 0 || i < first {
					first = i
				}
				break
			}
			from = i + 1
		}
	}
	return first
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// matches says whether term is one of words, or one of them ending in * starts it.
func matches(term string, words []string) bool {
	for _, w := range words {
		if w, prefix := strings.CutSuffix(w, "*"); term == w || prefix && strings.HasPrefix(term, w) {
			return true
		}
	}
	return false
}

// ErrNotFound is an id the memory does not hold.
var ErrNotFound = errors.New("no such entry")
