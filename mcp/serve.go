package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/jsonscan"
	"github.com/agmem/agmem/internal/tokens"
	"github.com/agmem/agmem/recall"
)

// The memory's MCP server: read-only, on stdio, through the official Go SDK. Its tools
// are the three layers agents read memory by (search, then the timeline around a hit,
// then the few observations wanted, whole) and the recent sessions. Every item cites
// the commit and the file that hold it, or says it is pending.

// Instructions tell the agent how to use the server.
const Instructions = "This server is your memory of what agents did before: every tool call, prompt and " +
	"session, kept in git. Before redoing work, search it (search: one line per hit, best first). " +
	"Then look at what came before and after a hit (timeline), and fetch only the observations you " +
	"need whole (get_observations). sessions lists recent sessions of a project."

// answerTokens bounds one answer, counted from above (tokens.Count), under the 25,000
// tokens that Claude Code takes of a tool's answer.
const answerTokens = 19000

// SearchInput is the search tool's arguments.
type SearchInput struct {
	Query   string `json:"query" jsonschema:"words to look for; \"a phrase\", serv* for a prefix, AND OR NOT"`
	Session string `json:"session,omitempty" jsonschema:"only this session"`
	Agent   string `json:"agent,omitempty" jsonschema:"only what this agent did: claude-code, codex, gemini-cli, cursor, mcp"`
	Type    string `json:"type,omitempty" jsonschema:"only this memory type: episodic, semantic or procedural"`
	Tool    string `json:"tool,omitempty" jsonschema:"only calls of this tool"`
	Since   string `json:"since,omitempty" jsonschema:"only from this time on: 2026-11-30, 2026-11-30T09:00 (UTC unless it names its zone), or how long ago (90m, 36h, 7d)"`
	Until   string `json:"until,omitempty" jsonschema:"only before this time, written as since"`
	Project string `json:"project,omitempty" jsonschema:"only sessions that worked in this directory or under it"`
	Failed  bool   `json:"failed,omitempty" jsonschema:"only calls that failed"`
	Limit   *int   `json:"limit,omitempty" jsonschema:"at most this many hits, 1 to 1000 (default 20)"`
}

// TimelineInput is the timeline tool's arguments.
type TimelineInput struct {
	ID     string `json:"id" jsonschema:"an observation's id or short id, as search gives it"`
	Before *int   `json:"before,omitempty" jsonschema:"entries before it (default 3)"`
	After  *int   `json:"after,omitempty" jsonschema:"entries after it (default 3)"`
}

// ObservationsInput is the get_observations tool's arguments.
type ObservationsInput struct {
	IDs []string `json:"ids" jsonschema:"the ids or short ids of the observations to read whole"`
}

// SessionsInput is the sessions tool's arguments.
type SessionsInput struct {
	Project string `json:"project,omitempty" jsonschema:"only sessions that worked in this directory or under it"`
	Agent   string `json:"agent,omitempty" jsonschema:"only sessions of this agent"`
	Limit   *int   `json:"limit,omitempty" jsonschema:"at most this many sessions, 1 to 1000 (default 10)"`
}

// Server is the memory's MCP server.
type Server struct {
	mu  sync.Mutex // one call at a time reads the memory
	mem *recall.Memory
	sdk *sdk.Server
}

// NewServer serves mem, as agmem of version.
func NewServer(mem *recall.Memory, version string) *Server {
	s := &Server{mem: mem, sdk: sdk.NewServer(&sdk.Implementation{Name: "agmem", Version: version},
		&sdk.ServerOptions{Instructions: Instructions})}
	sdk.AddTool(s.sdk, &sdk.Tool{Name: "search", Description: "Search every agent's memory, ranked by relevance: " +
		"one line per hit (short id, time in UTC, agent, type, tool, summary, where it matched, its tokens, its commit and file)."}, s.search)
	sdk.AddTool(s.sdk, &sdk.Tool{Name: "timeline", Description: "An observation among what its session did before " +
		"and after it: calls, prompts and session events, in time order."}, s.timeline)
	sdk.AddTool(s.sdk, &sdk.Tool{Name: "get_observations", Description: "Observations whole: arguments, result, " +
		"error, duration, the prompt that led to each, where git holds it. Long results are cut, and say so."}, s.observations)
	sdk.AddTool(s.sdk, &sdk.Tool{Name: "sessions", Description: "Recent sessions, latest first, with their first " +
		"prompt and counts."}, s.sessions)
	return s
}

// Run serves one client on in and out until it goes, or ctx is done. A line that is no
// JSON-RPC message is answered with an error, and the session goes on (wellFormed).
func (s *Server) Run(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	w := &lockedWriter{w: out}
	return s.RunOn(ctx, &sdk.IOTransport{Reader: newWellFormed(in, w), Writer: w})
}

// RunOn serves one client on a transport of the SDK's.
func (s *Server) RunOn(ctx context.Context, t sdk.Transport) error { return s.sdk.Run(ctx, t) }

// fresh brings the memory up to date before a call, within a short budget, and begins
// its answer: a call answers from what is indexed when the index has much to catch up
// (a rebuild after a clone or an upgrade, which agmem index does in the background),
// or when its update failed, and then its answer says so first (lag).
func (s *Server) fresh(ctx context.Context) *answer {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	s.mem.Refresh(ctx)
	a := &answer{}
	if note := s.lag(); note != "" {
		a.write(note + "\n")
	}
	return a
}

// lag is what a call says first when the index is behind (recall.Memory.Lag); "" when
// it is up to date.
func (s *Server) lag() string {
	note, wait := s.mem.Lag()
	switch {
	case note == "":
		return ""
	case wait:
		return "(" + note + "; ask again in a minute)"
	}
	return "(" + note + ")"
}

// notFound is err, which says the index is behind when it is: an id it does not know
// may be one it has not caught up with yet.
func (s *Server) notFound(err error) error {
	if note := s.lag(); note != "" && errors.Is(err, recall.ErrNotFound) {
		return fmt.Errorf("%w %s", err, note)
	}
	return err
}

// answer is a tool's answer, kept under answerTokens.
type answer struct {
	b      strings.Builder
	tokens int // b's, counted piece by piece
}

func (a *answer) write(s string) { a.writeCounted(s, tokens.Count(s)) }

// writeCounted is write of s counted as n tokens already.
func (a *answer) writeCounted(s string, n int) {
	a.b.WriteString(s)
	a.tokens += n
}

func (a *answer) printf(format string, args ...any) { a.write(fmt.Sprintf(format, args...)) }

// room is how many tokens the answer has left, less reserve for what ends it.
func (a *answer) room(reserve int) int { return answerTokens - a.tokens - reserve }

// add appends item, unless that would take the answer past its bound: then it says that
// the item and the rest after it, n of what in all, were left out, and what to ask
// instead, and returns false.
func (a *answer) add(item string, n int, what, advice string) bool {
	cost := tokens.Count(item)
	if cost > a.room(0) {
		a.printf("(%d %s left out: the answer's bound; %s)\n", n, what, advice)
		return false
	}
	a.writeCounted(item, cost)
	return true
}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

func (s *Server) search(ctx context.Context, _ *sdk.CallToolRequest, in SearchInput) (*sdk.CallToolResult, any, error) {
	q := recall.Query{Text: in.Query, Session: in.Session, Agent: in.Agent, Type: in.Type, Tool: in.Tool,
		Project: in.Project, Failed: in.Failed, Limit: orDefault(in.Limit, recall.DefaultLimit)}
	if q.Limit < 1 || q.Limit > recall.MaxLimit { // 0 given is no limit the CLI takes either
		return nil, nil, fmt.Errorf("limit must be 1 to %d", recall.MaxLimit)
	}
	var err error
	if q.Since, err = timeOf("since", in.Since); err != nil {
		return nil, nil, err
	}
	if q.Until, err = timeOf("until", in.Until); err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.fresh(ctx)
	res, err := s.mem.Search(q)
	if err != nil {
		return nil, nil, err
	}
	// The lines that fit the answer's bound, known first: the head says whether the
	// limit or the bound ended the hits, and so what to ask instead.
	var lines []string
	var cost []int // of each line
	room := a.room(tokens.Count(res.Unmatched) + 100)
	for _, h := range res.Hits {
		line := fmt.Sprintf("%s — %s (~%d tokens) %s\n", h.Ref.Line(), h.Snippet, h.Tokens, citation(h.Ref))
		n := tokens.Count(line)
		if room -= n; room < 0 {
			break
		}
		lines, cost = append(lines, line), append(cost, n)
	}
	a.printf("%d hit(s)", res.Total)
	if res.Uncounted() {
		a.write(" or more")
	}
	if res.AnyWord {
		a.write(" holding some of the words (none holds them all)")
	}
	switch {
	case len(lines) < len(res.Hits):
		a.printf("; the first %d, best first, all this answer holds (for others, add filters)", len(lines))
	case res.More:
		a.printf("; the first %d, best first (more exist: raise limit, or add filters)", len(lines))
	}
	a.write("\n")
	if res.Unmatched != "" {
		a.write(res.Unmatched + "\n")
	}
	for i, line := range lines {
		a.writeCounted(line, cost[i])
	}
	return text(a.b.String()), nil, nil
}

func (s *Server) timeline(ctx context.Context, _ *sdk.CallToolRequest, in TimelineInput) (*sdk.CallToolResult, any, error) {
	before, after := orDefault(in.Before, 3), orDefault(in.After, 3)
	if before < 0 || after < 0 || before > recall.MaxLimit || after > recall.MaxLimit {
		return nil, nil, fmt.Errorf("before and after must be 0 to %d", recall.MaxLimit)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.fresh(ctx)
	center, around, err := s.mem.Timeline(in.ID, before, after)
	if err != nil {
		return nil, nil, s.notFound(err)
	}
	lines, cost := make([]string, len(around)), make([]int, len(around))
	c := 0
	for i, r := range around {
		mark := "  "
		if r.ID == center.ID {
			mark, c = "> ", i
		}
		lines[i] = fmt.Sprintf("%s%s %s\n", mark, r.Line(), citation(r))
		cost[i] = tokens.Count(lines[i])
	}
	// Past the bound, the entries farthest from the one asked for are left out, on
	// either side, so that it and its nearest neighbours stay.
	lo, hi := c, c+1 // lines[lo:hi] are kept
	room := a.room(60 + cost[c])
	for room >= 0 && (lo > 0 || hi < len(lines)) {
		switch {
		case lo > 0 && (hi == len(lines) || c-lo <= hi-1-c) && cost[lo-1] <= room:
			lo--
			room -= cost[lo]
		case hi < len(lines) && cost[hi] <= room:
			room -= cost[hi]
			hi++
		default:
			room = -1
		}
	}
	if lo > 0 {
		a.printf("(%d earlier entries left out: the answer's bound; ask for fewer before)\n", lo)
	}
	for i := lo; i < hi; i++ {
		a.writeCounted(lines[i], cost[i])
	}
	if hi < len(lines) {
		a.printf("(%d later entries left out: the answer's bound; ask for fewer after)\n", len(lines)-hi)
	}
	return text(a.b.String()), nil, nil
}

func (s *Server) observations(ctx context.Context, _ *sdk.CallToolRequest, in ObservationsInput) (*sdk.CallToolResult, any, error) {
	if len(in.IDs) == 0 {
		return nil, nil, errors.New("ids is empty: give the ids search or timeline gave")
	}
	if len(in.IDs) > 100 {
		return nil, nil, errors.New("at most 100 ids at once")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.fresh(ctx)
	items, err := s.mem.ShowEach(in.IDs) // the answer's head says if the index is behind
	if err != nil {
		return nil, nil, err
	}
	if !slices.ContainsFunc(items, func(it recall.ShownOrNot) bool { return it.Err == nil }) {
		// Not one id names an entry: the call failed, for the reasons each says.
		why := make([]string, len(items))
		for i, it := range items {
			why[i] = it.Err.Error()
		}
		if note := s.lag(); note != "" {
			why = append(why, note)
		}
		return nil, nil, errors.New(strings.Join(why, "; "))
	}
	// Each gets its share of what the bound leaves (the answer may begin with a note);
	// a longer result is cut, and says so.
	share := a.room(0)/len(items) - 1
	for i, it := range items {
		var item string
		if it.Err != nil {
			item = it.Err.Error() + "\n"
		} else {
			item = observationText(it.Shown, share)
		}
		if i > 0 {
			item = "\n" + item
		}
		if !a.add(item, len(items)-i, "observation(s)", "ask for fewer at once") {
			break
		}
	}
	return text(a.b.String()), nil, nil
}

func (s *Server) sessions(ctx context.Context, _ *sdk.CallToolRequest, in SessionsInput) (*sdk.CallToolResult, any, error) {
	limit := orDefault(in.Limit, 10)
	if limit < 1 || limit > recall.MaxLimit {
		return nil, nil, fmt.Errorf("limit must be 1 to %d", recall.MaxLimit)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.fresh(ctx)
	list, err := s.mem.Sessions(in.Project, in.Agent, limit)
	if err != nil {
		return nil, nil, err
	}
	for i, ss := range list {
		line := hint.Block(ss.ID) + " " + hint.OneLine(fmt.Sprintf("%s %s, %d call(s), %d failed, in %s", ss.Last.Format("2006-01-02 15:04"),
			orDash(ss.Agent), ss.Observations, ss.Failures, orDash(ss.Cwd)))
		if ss.FirstPrompt != "" {
			line += fmt.Sprintf(": %q", ss.FirstPrompt)
		}
		if ss.Origin != recall.Local {
			line += fmt.Sprintf(" (from %s)", ss.Origin)
		}
		if !a.add(line+"\n", len(list)-i, "session(s)", "ask for a lower limit") {
			break
		}
	}
	if len(list) == 0 {
		why, err := s.mem.Unmatched(recall.Query{Agent: in.Agent, Project: in.Project})
		if err != nil {
			return nil, nil, err
		}
		if why != "" {
			why = ": " + why
		}
		a.write("no session" + why + "\n")
	}
	return text(a.b.String()), nil, nil
}

// observationText is an observation whole in about share tokens: its head, then its
// prompt, arguments and error each cut past a part of what the head leaves, its result
// (an event's text) past what they leave. Only a head longer than share takes more.
// What it recorded is shown as agmem show shows it (hint.Block): what would drive a
// terminal, reorder a line or hide text from a person is shown as its escape.
func observationText(sh recall.Shown, share int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\nid %s, session %s, %s\n", sh.Ref.Line(), citation(sh.Ref), sh.ID, hint.Block(sh.Session),
		sh.Time.Format(time.RFC3339))
	used := func() int { return tokens.Count(b.String()) }
	room := max(0, share-used())
	part := func(label, text string, bound int) {
		fmt.Fprintf(&b, "%s%s\n", label, cut(hint.Block(text), max(0, bound-tokens.Count(label)-1), sh.ID))
	}
	if sh.Prompt != "" {
		part("prompt: ", hint.OneLine(sh.Prompt), room/8)
	}
	o := sh.Entry.Observation
	if o == nil {
		part("", sh.Entry.Event.Text, share-used())
		return b.String()
	}
	if o.DurationMS != nil {
		fmt.Fprintf(&b, "duration: %d ms\n", *o.DurationMS)
	}
	args, _ := json.Marshal(json.RawMessage(o.Arguments))
	part("arguments: ", string(jsonscan.AppendHTMLUnescape(nil, args)), room/4)
	if o.Error != "" {
		part("error: ", o.Error, room/4)
	}
	if r := o.ResultText(); r != "" {
		part("result:\n", r, share-used())
	}
	return b.String()
}

// cut is s cut to at most n tokens (tokens.Count), its mark within them, where a
// character ends; the mark says how many characters were left out. Where n leaves no
// room for the mark, all of s is left out, and "[…]" says so.
func cut(s string, n int, id string) string {
	if tokens.Count(s) <= n {
		return s
	}
	mark := tokens.Count(fmt.Sprintf(cutMark, len(s), id))
	if n < mark {
		return "[…]"
	}
	end := tokens.End(s, n-mark)
	return s[:end] + fmt.Sprintf(cutMark, utf8.RuneCountInString(s[end:]), id)
}

// cutMark is what cut puts where it cut: how many characters it left out, and where
// they all are.
const cutMark = "\n[… %d more characters left out: agmem show %s]"

// citation is where git holds an entry, or that it is pending.
func citation(r recall.Ref) string {
	if r.Commit == "" {
		return "[pending: not in a commit yet]"
	}
	if r.Path == "" {
		return fmt.Sprintf("[commit %.12s]", r.Commit)
	}
	return fmt.Sprintf("[commit %.12s %s]", r.Commit, r.Path)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// orDefault is *n, or def when n is not given.
func orDefault(n *int, def int) int {
	if n == nil {
		return def
	}
	return *n
}

// timeOf reads a time as the CLI's filters do (recall.ParseTime).
func timeOf(name, s string) (time.Time, error) {
	t, ok := recall.ParseTime(s, time.Now())
	if !ok {
		return time.Time{}, fmt.Errorf("%s %q is not a time: give %s", name, s, recall.TimeForms)
	}
	return t, nil
}
