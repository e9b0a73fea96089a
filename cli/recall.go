package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/jsonscan"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/recall"
)

// searchFlags are the filters of agmem search, which the MCP server's search takes too.
func searchFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringFlag{Name: "session", Usage: "only this session"},
		&ucli.StringFlag{Name: "agent", Usage: "only what this agent did (claude-code, codex, gemini-cli, cursor, mcp, …)"},
		&ucli.StringFlag{Name: "type", Usage: "only this memory type: episodic, semantic or procedural"},
		&ucli.StringFlag{Name: "tool", Usage: "only calls of this tool"},
		&ucli.StringFlag{Name: "since", Usage: "only from this time on: 2026-11-30, 2026-11-30T09:00 (UTC unless it names its zone), or how long ago (90m, 36h, 7d)"},
		&ucli.StringFlag{Name: "until", Usage: "only before this time, written as for --since"},
		&ucli.StringFlag{Name: "project", Usage: "only sessions that worked in this directory or under it"},
		&ucli.BoolFlag{Name: "failed", Usage: "only calls that failed"},
		&ucli.IntFlag{Name: "limit", Value: recall.DefaultLimit, Usage: "at most this many hits"},
		&ucli.BoolFlag{Name: "json", Usage: "one JSON object per hit, per line"},
	}
}

func newSearchCommand(e *env) *ucli.Command {
	return &ucli.Command{
		Name:      "search",
		Usage:     "search every agent's memory: ranked by relevance, one line per hit",
		ArgsUsage: "QUERY",
		Description: "Words match words whatever their case, and all must match; \"a phrase\" matches its words\n" +
			"in a row; serv* matches words that start so, and \"state lo*\" a phrase whose last word\n" +
			"does; AND, OR, NOT (in capitals) and parentheses combine. Each hit: short id, time,\n" +
			"agent, memory type, tool, summary, where it matched (the match in **), and about how\n" +
			"many tokens the whole of it costs to read; \"agmem show ID\" shows it whole, \"agmem\n" +
			"timeline ID\" what came before and after.",
		Flags: searchFlags(),
		Action: func(c *ucli.Context) error {
			q, err := queryOf(c, strings.Join(c.Args().Slice(), " "), time.Now())
			if err != nil {
				return err
			}
			return onMemory(c, e, func(m *recall.Memory) error { return runSearch(e, m, q, c.Bool("json")) })
		},
	}
}

// queryOf reads a search's filters from c's flags.
func queryOf(c *ucli.Context, text string, now time.Time) (recall.Query, error) {
	q := recall.Query{Text: text, Session: c.String("session"), Agent: c.String("agent"), Type: c.String("type"),
		Tool: c.String("tool"), Project: c.String("project"), Failed: c.Bool("failed"), Limit: c.Int("limit")}
	if c.IsSet("limit") && q.Limit <= 0 {
		return q, hint.With(fmt.Errorf("--limit %d: must be 1 or more", q.Limit), "e.g. --limit 50")
	}
	if q.Limit > recall.MaxLimit {
		return q, hint.With(fmt.Errorf("--limit %d: must be %d or less", q.Limit, recall.MaxLimit),
			"narrow the search with its filters instead, e.g. --since 7d or --project DIR")
	}
	var err error
	if q.Since, err = timeFlag(c, "since", now); err != nil {
		return q, err
	}
	if q.Until, err = timeFlag(c, "until", now); err != nil {
		return q, err
	}
	return q, nil
}

// timeFlag reads a time as recall.ParseTime does.
func timeFlag(c *ucli.Context, name string, now time.Time) (time.Time, error) {
	t, ok := recall.ParseTime(c.String(name), now)
	if !ok {
		return time.Time{}, hint.With(fmt.Errorf("--%s %q is not a time", name, strings.TrimSpace(c.String(name))),
			"give "+recall.TimeForms)
	}
	return t, nil
}

// onMemory runs fn on the memory repo opened for reading back.
func onMemory(c *ucli.Context, e *env, fn func(*recall.Memory) error) error {
	repo, err := openRepo(c, e)
	if err != nil {
		return err
	}
	m, err := openMemory(e, repo)
	if err != nil {
		return err
	}
	defer m.Close()
	return fn(m)
}

// openMemory opens the memory with its index up to date, for a command that answers
// once: what it answers is whole, however long the index takes to catch up, and past a
// second it says on stderr why it waits. Only while another update holds the index
// past its busy timeout (a rebuild in the background) is the index read as it is, and
// then it says so.
func openMemory(e *env, repo memrepo.Repo) (*recall.Memory, error) {
	opened, said := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(said)
		select {
		case <-time.After(time.Second):
			fmt.Fprintln(e.stderr, "agmem: bringing the search index up to date first (after a clone, a pull or an upgrade it reads the memory's history once)")
		case <-opened:
		}
	}()
	m, err := recall.Open(context.Background(), repo)
	close(opened)
	<-said // the note, if any, before what the command prints
	if err != nil {
		return nil, indexError(err)
	}
	if note, wait := m.Lag(); note != "" && wait { // another update holds the index past its busy timeout
		report(e.stderr, hint.With(errors.New(note), `"agmem index" waits for it`))
	} else if note != "" { // an update failed: waiting mends nothing
		report(e.stderr, errors.New(note))
	}
	return m, nil
}

// liveBudget is how long a server that answers for a long time (agmem mcp serve, agmem
// ui) waits for the index before it starts: an agent gives up on an MCP server that is
// slow to start (Codex, by default, after 10 s).
const liveBudget = time.Second

// openLive opens the memory for such a server: past liveBudget, it starts from the index
// as it is, and an agmem index in the background brings the index up to date, which
// the server's later reads take in (and starts again if they find it still behind).
func openLive(repo memrepo.Repo) (*recall.Memory, error) {
	ctx, cancel := context.WithTimeout(context.Background(), liveBudget)
	defer cancel()
	m, err := recall.Open(ctx, repo)
	if err != nil {
		return nil, indexError(err)
	}
	m.SetCatchUp(oneAtATime(func() <-chan struct{} { return updateInBackground(repo) }))
	return m, nil
}

func indexError(err error) error {
	return hint.With(err, `the search index is only derived: "agmem verify" checks what it is made from`)
}

// recallError gives a bad query or an unknown id its advice.
func recallError(err error) error {
	var ambiguous *recall.AmbiguousError
	switch {
	case errors.Is(err, recall.ErrQuery):
		return hint.With(err, `e.g. agmem search 'discount NOT test', agmem search '"connection refused"', agmem search 'serv*'`)
	case errors.Is(err, recall.ErrNoType):
		return hint.With(err, "e.g. --type episodic")
	case errors.Is(err, recall.ErrNoTime):
		return hint.With(err, "--until is the first moment left out: give it a later time than --since")
	case errors.As(err, &ambiguous):
		return hint.With(err, "give one of the whole ids it lists")
	case errors.Is(err, recall.ErrNotFound):
		return hint.With(err, `"agmem search" finds ids; a pulled agent's entries come with "agmem pull"`)
	}
	return err
}

func runSearch(e *env, m *recall.Memory, q recall.Query, asJSON bool) error {
	res, err := m.Search(q)
	if err != nil {
		return recallError(err)
	}
	if res.AnyWord {
		report(e.stderr, errors.New("no entry holds every word: these hold some of them, best first"))
	}
	w := bufio.NewWriter(e.stdout)
	defer w.Flush()
	for _, h := range res.Hits {
		if asJSON {
			line, _ := json.Marshal(h)
			w.Write(line)
			w.WriteByte('\n')
			continue
		}
		fmt.Fprintf(w, "%s%s — %s (~%d tokens)\n", h.Ref.Line(), pendingMark(h.Ref), h.Snippet, h.Tokens)
	}
	if !asJSON && res.More {
		fmt.Fprintf(w, "(%s hits in all; --limit shows more, the filters fewer)\n", total(res))
	}
	if len(res.Hits) == 0 {
		// Nothing is printed on stdout; a person is told why on stderr.
		if res.Unmatched != "" {
			report(e.stderr, fmt.Errorf("no hits: %s", res.Unmatched))
		} else {
			report(e.stderr, hint.With(errors.New("no hits"), "fewer words or filters, a prefix (serv*), or OR find more"))
		}
	}
	return nil
}

func total(res recall.Results) string {
	if res.Uncounted() {
		return strconv.Itoa(res.Total) + " or more"
	}
	return strconv.Itoa(res.Total)
}

func newShowCommand(e *env) *ucli.Command {
	return &ucli.Command{
		Name:      "show",
		Usage:     "show observations whole: arguments, the full result, error, where git holds them",
		ArgsUsage: "ID…",
		Description: "An ID is an observation's whole id or the short one its file's name and \"agmem search\"\n" +
			"show. With --json: one object per line, in the native shape with commit and path.",
		Flags: []ucli.Flag{&ucli.BoolFlag{Name: "json", Usage: "one JSON object per observation, per line"}},
		Action: func(c *ucli.Context) error {
			if c.NArg() == 0 {
				return hint.With(errors.New("show needs at least one id"), `"agmem search" finds ids`)
			}
			return onMemory(c, e, func(m *recall.Memory) error { return runShow(e, m, c.Args().Slice(), c.Bool("json")) })
		},
	}
}

func runShow(e *env, m *recall.Memory, ids []string, asJSON bool) error {
	items, err := m.ShowEach(ids)
	if err != nil {
		return recallError(err)
	}
	w := bufio.NewWriter(e.stdout)
	var wrong []error // each id that names no entry, said after the others are shown
	shown := 0
	for _, it := range items {
		switch {
		case it.Err != nil:
			wrong = append(wrong, it.Err)
		case asJSON:
			w.Write(shownJSON(it.Shown))
			w.WriteByte('\n')
		default:
			if shown > 0 {
				w.WriteString("\n")
			}
			writeShown(w, it.Shown)
			shown++
		}
	}
	w.Flush()
	if len(wrong) == 0 {
		return nil
	}
	for _, err := range wrong[:len(wrong)-1] {
		report(e.stderr, recallError(err))
	}
	return recallError(wrong[len(wrong)-1]) // exit 1, as for one id alone
}

// shownJSON is an entry in the native shape, with where git holds it, and <, > and &
// as they are (replay --json's JSON): json.Marshal writes them \u003c, \u003e, \u0026.
func shownJSON(s recall.Shown) []byte {
	var v any = s.Entry.Event
	if o := s.Entry.Observation; o != nil {
		v = o
	}
	raw, _ := json.Marshal(v)
	extra, _ := json.Marshal(map[string]string{"commit": s.Commit, "path": s.Path, "prompt": s.Prompt})
	// One object: the entry's members, then where it is.
	return jsonscan.AppendHTMLUnescape(nil, append(append(raw[:len(raw)-1:len(raw)-1], ','), extra[1:]...))
}

func writeShown(w *bufio.Writer, s recall.Shown) {
	fmt.Fprintf(w, "%s\n", s.Ref.Line())
	fmt.Fprintf(w, "id:       %s\nsession:  %s\ntime:     %s\n", s.ID, hint.Block(s.Session), s.Time.Format(time.RFC3339Nano))
	if s.Commit != "" {
		fmt.Fprintf(w, "commit:   %s\n", s.Commit)
		if s.Path != "" { // an event is in its session's record, in no file of its own
			fmt.Fprintf(w, "path:     %s\n", s.Path)
		}
	} else {
		w.WriteString("commit:   (pending: in no commit of the branch yet; agmem flush commits it, or agmem verify --repair where the branch was rewritten)\n")
	}
	if s.Prompt != "" {
		fmt.Fprintf(w, "prompt:   %s\n", hint.OneLine(s.Prompt))
	}
	if o := s.Entry.Observation; o != nil {
		if o.DurationMS != nil {
			fmt.Fprintf(w, "duration: %d ms\n", *o.DurationMS)
		}
		args, err := json.MarshalIndent(json.RawMessage(o.Arguments), "", "  ")
		if err != nil {
			args = o.Arguments
		}
		fmt.Fprintf(w, "\narguments:\n%s\n", hint.Block(string(jsonscan.AppendHTMLUnescape(nil, args))))
		if o.Error != "" {
			fmt.Fprintf(w, "\nerror:\n%s\n", hint.Block(o.Error))
		}
		if text := o.ResultText(); text != "" {
			fmt.Fprintf(w, "\nresult:\n%s\n", hint.Block(strings.TrimRight(text, "\n")))
		}
		return
	}
	if t := s.Entry.Event.Text; t != "" {
		fmt.Fprintf(w, "\n%s\n", hint.Block(t))
	}
}

func newTimelineCommand(e *env) *ucli.Command {
	return &ucli.Command{
		Name:      "timeline",
		Usage:     "an observation among what its session did before and after it",
		ArgsUsage: "ID",
		Flags: []ucli.Flag{
			&ucli.IntFlag{Name: "before", Value: 3, Usage: "entries before it"},
			&ucli.IntFlag{Name: "after", Value: 3, Usage: "entries after it"},
			&ucli.BoolFlag{Name: "json", Usage: "one JSON object per entry, per line"},
		},
		Action: func(c *ucli.Context) error {
			if c.NArg() != 1 {
				return hint.With(errors.New("timeline needs one id"), `"agmem search" finds ids`)
			}
			before, after := c.Int("before"), c.Int("after")
			if before < 0 || after < 0 || before > recall.MaxLimit || after > recall.MaxLimit {
				return hint.With(fmt.Errorf("--before and --after must be 0 to %d", recall.MaxLimit), "e.g. --before 5 --after 5")
			}
			return onMemory(c, e, func(m *recall.Memory) error {
				center, around, err := m.Timeline(c.Args().First(), before, after)
				if err != nil {
					return recallError(err)
				}
				w := bufio.NewWriter(e.stdout)
				defer w.Flush()
				for _, r := range around {
					if c.Bool("json") {
						line, _ := json.Marshal(r)
						w.Write(line)
						w.WriteByte('\n')
						continue
					}
					mark := "  "
					if r.ID == center.ID {
						mark = "> "
					}
					fmt.Fprintf(w, "%s%s%s\n", mark, r.Line(), pendingMark(r))
				}
				return nil
			})
		},
	}
}

// pendingMark says of an entry in no commit yet that it is in the journal, until a flush.
func pendingMark(r recall.Ref) string {
	if r.Commit == "" {
		return " (pending)"
	}
	return ""
}
