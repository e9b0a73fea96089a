package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/jsonscan"
	"github.com/agmem/agmem/journal"
	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/recall"
	"github.com/agmem/agmem/redact"
	"github.com/agmem/agmem/vcs"
)

// Page sizes: what a browser shows at once, whatever a session or a repo holds.
const (
	sessionsPerPage = 50
	callsPerPage    = 200
	contextShown    = 3 // the context blocks a session's page shows whole, its last
)

var funcs = template.FuncMap{
	"when":  func(t time.Time) string { return t.Local().Format(time.DateTime) },
	"short": vcs.Short,
	// seg makes an id one segment of a path: session ids are whatever an agent sent,
	// "/", "?" and "#" included.
	"seg": pathSegment,
	// px is a coordinate of the timeline's picture.
	"px": func(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) },
	"marked": func(snippet string) []markedPart {
		// A snippet marks each match in **: the parts alternate, plain then marked.
		var parts []markedPart
		for i, p := range strings.Split(snippet, "**") {
			if p != "" {
				parts = append(parts, markedPart{Text: p, Mark: i%2 == 1})
			}
		}
		return parts
	},
	"add": func(a, b int) int { return a + b },
}

type markedPart struct {
	Text string
	Mark bool
}

// render writes the page name with data, or the error it met. A page read while the
// index has not caught up with the memory (a rebuild in the background), or after its
// update failed, says so.
func (s *Server) render(w http.ResponseWriter, name string, data map[string]any) {
	data["Lag"], data["Wait"] = s.mem.Lag()
	var out bytes.Buffer
	if err := s.pages.ExecuteTemplate(&out, name, data); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(w, shownText(out.String()))
}

// shownText is page with what it shows of what was recorded as agmem show shows it: a
// character that would reorder the text or hide text from the reader (an override, a
// tag character) as its escape (hint.Block). Only text between tags is read: an
// attribute's value is left as it is (a session's id the page's script asks the server
// for), and html/template has escaped every < and > of a value, so the first > ends the
// tag a < begins.
func shownText(page string) string {
	var b strings.Builder
	for {
		text, rest, inTag := strings.Cut(page, "<")
		b.WriteString(hint.Block(text))
		if !inTag {
			return b.String()
		}
		tag, after, closed := strings.Cut(rest, ">")
		b.WriteString("<" + tag)
		if !closed {
			return b.String()
		}
		b.WriteByte('>')
		page = after
	}
}

func fail(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	var ambiguous *recall.AmbiguousError
	if errors.Is(err, recall.ErrNoSession) || errors.Is(err, recall.ErrNotFound) || errors.As(err, &ambiguous) ||
		errors.Is(err, plumbing.ErrObjectNotFound) {
		code = http.StatusNotFound
	}
	http.Error(w, err.Error(), code)
}

// sessionRow is one session on the sessions page.
type sessionRow struct {
	recall.IndexedSession
	Pending int
}

func (s *Server) sessionsPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 0)
	f := recall.SessionFilter{Project: q.Get("project"), Agent: q.Get("agent"), Limit: sessionsPerPage + 1,
		Offset: page * sessionsPerPage}
	if d := q.Get("date"); d != "" {
		day, err := time.ParseInLocation("2006-01-02", d, time.Local)
		if err != nil {
			http.Error(w, "date: give it as 2026-11-30", http.StatusBadRequest)
			return
		}
		f.Since, f.Until = day, day.AddDate(0, 0, 1)
	}
	m := s.memory(r)
	list, err := m.SessionsOf(f)
	if err != nil {
		fail(w, err)
		return
	}
	infos, err := s.repo.Journal().Sessions()
	if err != nil {
		fail(w, err)
		return
	}
	pending := map[string]int{}
	for _, in := range infos {
		pending[in.ID] = in.Pending + in.PendingEvents
	}
	more := len(list) > sessionsPerPage
	list = list[:min(len(list), sessionsPerPage)]
	rows := make([]sessionRow, len(list))
	for i, sess := range list {
		rows[i] = sessionRow{IndexedSession: sess, Pending: pending[sess.ID]}
	}
	s.render(w, "sessions.html", map[string]any{"Title": "Sessions", "Rows": rows, "Page": page, "More": more,
		"Project": f.Project, "Agent": f.Agent, "Date": q.Get("date"),
		"Newer": pageLink(q, page-1), "Older": pageLink(q, page+1)})
}

// pageLink is the sessions page's query for another page, with the same filters.
func pageLink(q url.Values, page int) template.URL {
	v := url.Values{}
	for _, k := range []string{"project", "agent", "date"} {
		if q.Get(k) != "" {
			v.Set(k, q.Get(k))
		}
	}
	v.Set("page", strconv.Itoa(page))
	return template.URL("/?" + v.Encode()) // Encode escapes every value
}

// sessionEntries reads a session whole, from the journal or git.
func (s *Server) sessionEntries(id string) ([]memory.Entry, error) {
	from, err := recall.Locate(s.repo, id)
	if err != nil {
		return nil, err
	}
	var entries []memory.Entry
	err = recall.EachEntry(s.repo, from, id, func(e memory.Entry) error {
		entries = append(entries, e)
		return nil
	})
	return entries, err
}

// call is one row of a session's list of calls and events.
type call struct {
	Obs     *memory.Observation
	Event   *memory.Event
	Time    time.Time
	Failed  bool
	Pending bool
}

func (s *Server) sessionPage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	entries, err := s.sessionEntries(id)
	if err != nil {
		fail(w, err)
		return
	}
	info, known, err := s.repo.Journal().Session(id)
	if err != nil {
		fail(w, err)
		return
	}
	pending := map[string]bool{}
	if known && info.Pending+info.PendingEvents > 0 {
		if pending, err = s.repo.Journal().Uncommitted(id); err != nil {
			fail(w, err)
			return
		}
	}
	var calls []call
	var context []*memory.Event
	observations, failures := 0, 0
	for _, e := range entries {
		c := call{Obs: e.Observation, Event: e.Event, Time: e.Time(), Pending: pending[e.ID()]}
		if c.Obs != nil {
			observations++
			if c.Failed = c.Obs.Error != ""; c.Failed {
				failures++
			}
		} else if c.Event.Name == memory.ContextGiven {
			context = append(context, c.Event)
		}
		calls = append(calls, c)
	}
	pages := max((len(calls)+callsPerPage-1)/callsPerPage, 1)
	page := pages - 1 // the latest, where a live session grows
	if p, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && p >= 0 && p < pages {
		page = p
	}
	shown := calls[min(page*callsPerPage, len(calls)):min((page+1)*callsPerPage, len(calls))]
	live := liveOf(info, known)
	// Each block is kilobytes, and a session resumed a hundred times was told a hundred:
	// the last few whole; every one is in the list of calls and events.
	earlier := max(len(context)-contextShown, 0)
	s.render(w, "session.html", map[string]any{"Title": "Session " + id, "ID": id, "Calls": shown,
		"Total": len(calls), "Observations": observations, "Failures": failures, "Context": context[earlier:], "EarlierContext": earlier,
		"Timeline": drawTimeline(entries), "Page": page, "Pages": pages, "Live": live,
		"PendingCount": len(pending), "Agent": agentOf(entries)})
}

func agentOf(entries []memory.Entry) string {
	for _, e := range entries {
		if src := e.Source(); src != "" {
			return src
		}
	}
	return ""
}

// live is what changes on a session's page while it is recorded and flushed: how many
// entries the journal holds of it, and how many of those are pending. Entries is -1
// when the journal does not know the session: its page does not follow it.
type live struct {
	Entries int `json:"entries"`
	Pending int `json:"pending"`
}

func liveOf(info journal.SessionInfo, known bool) live {
	if !known {
		return live{Entries: -1}
	}
	return live{Entries: info.Observations + info.Events, Pending: info.Pending + info.PendingEvents}
}

// sessionCount is a session's live figures, for its page to poll.
func (s *Server) sessionCount(w http.ResponseWriter, r *http.Request) {
	info, known, err := s.repo.Journal().Session(r.PathValue("id"))
	if err != nil {
		fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(liveOf(info, known))
}

func (s *Server) observationPage(w http.ResponseWriter, r *http.Request) {
	m := s.memory(r)
	shown, err := m.Show([]string{r.PathValue("id")})
	var around []recall.Ref
	if err == nil {
		_, around, err = m.Timeline(shown[0].ID, 1, 1)
	}
	if err != nil {
		fail(w, err)
		return
	}
	sh := shown[0]
	var prev, next *recall.Ref // around holds what came before it, it, and what came after
	for i := range around {
		if around[i].ID != sh.ID {
			continue
		}
		if i > 0 {
			prev = &around[i-1]
		}
		if i+1 < len(around) {
			next = &around[i+1]
		}
	}
	data := map[string]any{"Title": sh.Summary, "Shown": sh, "Prev": prev, "Next": next}
	if o := sh.Entry.Observation; o != nil {
		data["Obs"] = o
		data["Arguments"] = indentJSON(o.Arguments)
		data["Result"] = resultText(o.Result)
	} else {
		data["Event"] = sh.Entry.Event
	}
	if sh.Commit != "" {
		c, err := s.mem.Git().Commit(plumbing.NewHash(sh.Commit))
		if err != nil {
			fail(w, fmt.Errorf("commit %s of %s: %w", sh.Commit, sh.ID, err))
			return
		}
		message := redactedMessage(c.Message)
		data["Subject"], _, _ = strings.Cut(message, "\n")
		data["Trailers"] = vcs.ParseTrailers(message)
	}
	s.render(w, "observation.html", data)
}

// indentJSON is JSON as a person reads it, HTML characters as they are.
func indentJSON(raw json.RawMessage) string {
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return string(raw)
	}
	// What the journal holds HTML-escaped (\u003c) as the character; the page escapes
	// it again.
	return string(jsonscan.AppendHTMLUnescape(nil, out.Bytes()))
}

// resultText is a call's whole result: a JSON string as its text, other JSON indented.
func resultText(raw json.RawMessage) string {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return text
	}
	if len(raw) == 0 {
		return ""
	}
	return indentJSON(raw)
}

// searchPageHits is how many hits a search page shows, and how many more each "more".
const searchPageHits = 50

// pathSegment escapes s as one segment of a path: url.PathEscape leaves "." and "..",
// which a browser resolves (a session named ".." linked to /session/.. is /).
func pathSegment(s string) string {
	if s == "." || s == ".." {
		return strings.ReplaceAll(s, ".", "%2E")
	}
	return url.PathEscape(s)
}

func (s *Server) searchPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	data := map[string]any{"Title": "Search", "Q": q.Get("q"), "Session": q.Get("session"), "Agent": q.Get("agent"),
		"Type": q.Get("type"), "Tool": q.Get("tool"), "Project": q.Get("project"), "Failed": q.Get("failed") != ""}
	data["Since"], data["Until"] = q.Get("since"), q.Get("until")
	if text := strings.TrimSpace(q.Get("q")); text != "" {
		query := recall.Query{Text: text, Session: q.Get("session"), Agent: q.Get("agent"), Type: q.Get("type"),
			Tool: q.Get("tool"), Project: q.Get("project"), Failed: q.Get("failed") != "", Limit: searchPageHits}
		// A page of hits at a time; "more" asks for the next with those before it.
		if n, err := strconv.Atoi(q.Get("limit")); err == nil && n > 0 {
			query.Limit = min(n, recall.MaxLimit)
		}
		// Days, as the page's date inputs give them: since the start of one, until the
		// end of the other; or any time agmem search takes (recall.ParseTime).
		now := time.Now()
		for _, d := range []struct {
			name string
			to   *time.Time
			add  int
		}{{"since", &query.Since, 0}, {"until", &query.Until, 1}} {
			v := q.Get(d.name)
			if day, err := time.ParseInLocation("2006-01-02", v, time.Local); err == nil {
				*d.to = day.AddDate(0, 0, d.add)
			} else if t, ok := recall.ParseTime(v, now); ok {
				*d.to = t
			} else {
				http.Error(w, fmt.Sprintf("%s %q is not a time: give %s", d.name, v, recall.TimeForms), http.StatusBadRequest)
				return
			}
		}
		m := s.memory(r)
		results, err := m.Search(query)
		if err != nil {
			data["Error"] = err.Error()
		} else {
			data["Results"] = results
			if results.More && query.Limit < recall.MaxLimit {
				more := r.URL.Query()
				more.Set("limit", strconv.Itoa(min(query.Limit+searchPageHits, recall.MaxLimit)))
				data["More"] = "/search?" + more.Encode()
			}
		}
	}
	s.render(w, "search.html", data)
}

func (s *Server) commitPage(w http.ResponseWriter, r *http.Request) {
	h := plumbing.NewHash(r.PathValue("hash"))
	c, err := s.mem.Git().Commit(h)
	if err == nil && h.String() != r.PathValue("hash") {
		err = plumbing.ErrObjectNotFound // not a commit's whole id, as this server writes them
	}
	if err != nil {
		fail(w, fmt.Errorf("commit %s: %w", r.PathValue("hash"), err))
		return
	}
	changes, err := s.mem.Git().PathChanges(c)
	if err != nil {
		fail(w, err)
		return
	}
	message := redactedMessage(c.Message)
	subject, body, _ := strings.Cut(message, "\n")
	for i := range changes { // a fetched session's record is filed under its id as it was
		changes[i].Path, _ = redact.Default().Text(changes[i].Path)
	}
	session := vcs.TrailerValue(vcs.ParseTrailers(c.Message), vcs.TrailerSession)
	if session != "" {
		session = recall.ShownSession(session)
	}
	s.render(w, "commit.html", map[string]any{"Title": subject, "Commit": c, "Subject": subject,
		"Body": strings.TrimSpace(body), "Files": changes, "Signed": c.PGPSignature != "", "Session": session})
}

// redactedMessage is a commit's message as the viewer shows it: redacted again, since a
// fetched branch's was written by another agmem (its model's words, its settings).
func redactedMessage(message string) string {
	text, _ := redact.Default().Text(message)
	return text
}
