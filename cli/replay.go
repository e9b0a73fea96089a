package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/jsonscan"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/recall"
	"github.com/agmem/agmem/vcs"
)

type replayOptions struct {
	session string
	asJSON  bool
	events  bool
}

func newReplayCommand(e *env) *ucli.Command {
	var o replayOptions
	return &ucli.Command{
		Name:  "replay",
		Usage: "show what an agent did in a session, in order",
		Description: "Reads the journal, or the git history when the journal does not hold the session\n" +
			"(a fresh clone). --json prints one native observation per line, ready for\n" +
			"\"agmem record --jsonl\"; --events adds the session events as lines of their own.",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "session", Usage: "the session id (see \"agmem sessions\")", Destination: &o.session},
			&ucli.BoolFlag{Name: "json", Usage: "one JSON object per line", Destination: &o.asJSON},
			&ucli.BoolFlag{Name: "events", Usage: "with --json, include session events", Destination: &o.events},
		},
		Action: onRepo(e, func(_ *ucli.Context, repo memrepo.Repo) error {
			if o.session == "" {
				return hint.With(errors.New("replay needs --session ID"), `"agmem sessions" lists the sessions there are`)
			}
			return runReplay(e, repo, o)
		}),
	}
}

func runReplay(e *env, repo memrepo.Repo, o replayOptions) error {
	w := bufio.NewWriterSize(e.stdout, 64<<10)
	defer w.Flush()
	from, err := recall.Locate(repo, o.session)
	if err != nil {
		return err
	}
	var show func(memory.Entry) error
	if o.asJSON {
		switch from {
		case recall.InJournal:
			return repo.Journal().TimelineJSON(o.session, func(raw []byte) error { return writeStored(w, raw, o.events) })
		case recall.InGit:
			return replayFromGit(w, repo, o)
		}
		show = func(en memory.Entry) error {
			var v any = en.Observation
			if en.Observation == nil {
				if !o.events {
					return nil
				}
				v = en.Event
			}
			raw, err := json.Marshal(v)
			if err != nil {
				return err
			}
			w.Write(jsonscan.AppendHTMLUnescape(w.AvailableBuffer(), raw))
			return w.WriteByte('\n')
		}
	} else {
		headed := false // once an entry is found: a session that is nowhere prints nothing
		show = func(en memory.Entry) error {
			if !headed {
				fmt.Fprintf(w, "session %s\n", hint.Block(o.session))
				headed = true
			}
			_, err := io.WriteString(w, timelineLine(en))
			return err
		}
	}
	return eachEntry(repo, from, o.session, show)
}

// eachEntry walks a session's entries in order, from where they are.
func eachEntry(repo memrepo.Repo, from recall.Where, session string, fn func(memory.Entry) error) error {
	err := recall.EachEntry(repo, from, session, fn)
	if errors.Is(err, recall.ErrNoSession) {
		return noSession(session)
	}
	return err
}

// replayFromGit streams a session the journal does not know from git, as TimelineJSON
// streams the journal's: a fresh clone replays a session of any size in little memory.
func replayFromGit(w *bufio.Writer, repo memrepo.Repo, o replayOptions) error {
	git, err := vcs.Open(repo.Root)
	if err != nil {
		return err
	}
	n, err := recall.SessionJSON(git, o.session, func(raw []byte) error { return writeStored(w, raw, o.events) })
	if err != nil {
		return fmt.Errorf("read session %s from git: %w", o.session, err)
	}
	if n == 0 {
		return noSession(o.session)
	}
	return nil
}

// The journal gives an entry (journal.TimelineJSON) as the JSON of a memory.Entry: its
// one member, an observation or an event, encoded as replay --json writes it.
var (
	storedObservation = []byte(`{"observation":`)
	storedEvent       = []byte(`{"event":`)
)

// writeStored writes the observation (or, with events, the event) an entry stored in
// the journal holds, as a line, without decoding it and encoding it again.
func writeStored(w *bufio.Writer, raw []byte, events bool) error {
	var member []byte
	switch {
	case bytes.HasPrefix(raw, storedObservation):
		member = raw[len(storedObservation) : len(raw)-1]
	case bytes.HasPrefix(raw, storedEvent) && events:
		member = raw[len(storedEvent) : len(raw)-1]
	default:
		return nil
	}
	w.Write(jsonscan.AppendHTMLUnescape(w.AvailableBuffer(), member))
	return w.WriteByte('\n')
}

func noSession(session string) error {
	return hint.With(errors.New("no session "+session+" in the journal or the git history"),
		`"agmem sessions" lists the sessions there are`)
}

// timelineLine is one entry as a person reads it in a terminal: one line, time first.
func timelineLine(en memory.Entry) string {
	at := en.Time().UTC().Format(time.DateTime)
	if ev := en.Event; ev != nil {
		text := ev.Text
		switch ev.Name {
		case "SessionStart":
			text = strings.TrimSpace(ev.Attrs["start_source"] + " " + ev.Attrs["model"])
			if mode := ev.Attrs["permission_mode"]; mode != "" {
				text += "  permissions: " + mode
			}
			if path := ev.Attrs["transcript_path"]; path != "" {
				text += "  transcript: " + path
			}
		case "UserPromptSubmit":
			text = "prompt: " + text
		}
		return fmt.Sprintf("%s  -- %s %s\n", at, ev.Name, clip(text, 160))
	}
	o := en.Observation
	mark := "  "
	if o.Error != "" {
		mark = "! "
	}
	line := fmt.Sprintf("%s  %s[%s] %s", at, mark, o.MemoryType, clip(o.Summary, 160))
	if o.Interrupted {
		line += "  interrupted"
	}
	if o.Error != "" {
		line += "  error: " + clip(o.Error, 120)
	}
	return line + "\n"
}

// clip makes s one line of at most n runes.
func clip(s string, n int) string {
	s = hint.OneLine(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
