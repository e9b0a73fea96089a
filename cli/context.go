package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/capture"
	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/recall"
	"github.com/agmem/agmem/record"
	"github.com/agmem/agmem/vcs"
)

// contextBudget is how long agmem context brings the index up to date before it
// answers from the index as it is: it runs before an agent's session starts. What it
// leaves is done by an "agmem index" in the background.
const contextBudget = 60 * time.Millisecond

func newContextCommand(e *env) *ucli.Command {
	return &ucli.Command{
		Name:  "context",
		Usage: "what an agent is told of its project when its session starts",
		Description: "Tells of the project's most recent sessions, newest first, one line each, then how to\n" +
			"learn more; at most [context] max_chars characters (6,000; never above 10,000). The\n" +
			"project is --project, else the payload's cwd when a SessionStart hook payload is on\n" +
			"stdin, else the git worktree around the working directory, else the directory. As a\n" +
			"hook, what it gave the agent is recorded in the agent's session. Nothing known of the\n" +
			"project: nothing is printed.",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "project", Usage: "the project's directory"},
			&ucli.StringFlag{Name: "format", Value: "text", Usage: "text, claude (the SessionStart hook output Claude Code, Codex and Gemini CLI read) or json"},
			&ucli.StringFlag{Name: "agent", Usage: "the agent whose SessionStart hook this is (claude, codex, gemini): its payload is read as that agent's"},
		},
		Action: func(c *ucli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			repo, err := openRepo(c, e)
			if err != nil {
				return err
			}
			return runContext(e, repo, c.String("project"), c.String("format"), c.String("agent"))
		},
	}
}

func runContext(e *env, repo memrepo.Repo, project, format, agent string) error {
	switch format {
	case "text", "claude", "json":
	default:
		return hint.With(fmt.Errorf("--format %q is none of text, claude, json", format), "e.g. --format claude, as a Claude Code hook")
	}
	cfg, err := loadConfig(e, repo)
	if err != nil {
		return err
	}
	if !cfg.Context.Enabled {
		return nil
	}
	if _, ok := capture.Agents[agent]; !ok && agent != "" {
		return hint.With(fmt.Errorf("--agent %q is not an agent agmem reads hooks of", agent), "name one of claude, codex, gemini, cursor, or leave --agent out")
	}
	hook := hookPayload(e.stdin, agent)
	if project == "" {
		project = hook.cwd
	}
	if project == "" {
		if project, err = projectHere(); err != nil {
			return err
		}
	}
	if project, err = filepath.Abs(project); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), contextBudget)
	defer cancel()
	m, err := recall.OpenForContext(ctx, repo)
	if err != nil {
		return hint.With(err, `the search index is only derived: "agmem verify" checks what it is made from`)
	}
	defer m.Close()
	if ctx.Err() != nil {
		updateInBackground(repo)
	}
	block, err := m.Context(project, cfg.Context.MaxChars)
	if err != nil {
		return err
	}
	if block.Text == "" {
		return nil
	}
	if hook.session != "" {
		keepContext(e, repo, hook, block)
	}
	switch format {
	case "claude":
		out, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]string{
			"hookEventName": "SessionStart", "additionalContext": block.Text}})
		fmt.Fprintf(e.stdout, "%s\n", out)
	case "json":
		out, _ := json.Marshal(block)
		fmt.Fprintf(e.stdout, "%s\n", out)
	default:
		io.WriteString(e.stdout, block.Text)
	}
	return nil
}

// startHook is what agmem context reads of a SessionStart hook payload on its stdin.
type startHook struct {
	session, cwd, source string
}

// hookPayload reads a hook payload, if stdin holds one: a terminal or nothing is none.
func hookPayload(stdin io.Reader, agent string) startHook {
	if f, ok := stdin.(*os.File); ok {
		if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice != 0 {
			return startHook{}
		}
	}
	data, err := io.ReadAll(io.LimitReader(stdin, 1<<20))
	if err != nil || len(strings.TrimSpace(string(data))) == 0 {
		return startHook{}
	}
	d, err := capture.Decode(data, capture.Policy{Agent: agent}, time.Now())
	if err != nil || len(d.Entries) != 1 || d.Entries[0].Event == nil {
		return startHook{}
	}
	ev := d.Entries[0].Event
	return startHook{session: ev.SessionID, cwd: ev.Attrs["cwd"], source: ev.Source}
}

// projectHere is the git worktree around the working directory, else the directory.
func projectHere() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return wd, nil
		}
	}
}

// keepContext records what the agent was told as an event of its session, with the
// ids it cited: replay shows what the agent knew when it started, and an audit can
// tell. A failure to record it is said, and does not keep the agent from its context.
func keepContext(e *env, repo memrepo.Repo, hook startHook, block recall.Context) {
	rec, err := record.Open(repo.Root, record.Options{Getenv: e.getenv})
	if err == nil {
		_, err = rec.Record(record.Event{Session: hook.session, Name: memory.ContextGiven, Text: block.Text,
			Source: hook.source, Attrs: map[string]string{"cwd": block.Project, "cited": strings.Join(block.Cited, " ")}})
	}
	if err != nil {
		warn(e, fmt.Errorf("the context given was not recorded: %w", err))
	}
}

// updateInBackground starts "agmem index", which brings the index up to date for the
// next session, and does not wait for it.
func updateInBackground(repo memrepo.Repo) {
	self, err := os.Executable()
	if err != nil {
		return
	}
	cmd := exec.Command(self, "--repo", repo.Root, "index")
	cmd.Dir = repo.Root
	if cmd.Start() == nil {
		go cmd.Wait()
	}
}

func newIndexCommand(e *env) *ucli.Command {
	return &ucli.Command{
		Name:  "index",
		Usage: "bring the search index up to date now (flush, pull and import do it themselves)",
		Description: "The index (.agmem/index.db, .agmem/search/) is derived from git and the journal: --rebuild makes it\n" +
			"anew, which loses nothing.",
		Flags: []ucli.Flag{&ucli.BoolFlag{Name: "rebuild", Usage: "make the index anew"}},
		Action: onRepo(e, func(c *ucli.Context, repo memrepo.Repo) error {
			if c.Bool("rebuild") {
				if err := recall.RemoveIndex(repo.StateDir()); err != nil {
					return err
				}
			}
			git, err := vcs.Open(repo.Root)
			if err != nil {
				return err
			}
			u, err := recall.UpdateIndex(repo.StateDir(), git, repo.Journal())
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "indexed %d entries of %d commits in %s\n", u.Entries, u.Commits, u.Took.Round(time.Millisecond))
			return nil
		}),
	}
}
