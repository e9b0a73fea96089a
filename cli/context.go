package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/recall"
	"github.com/agmem/agmem/sessionstart"
	"github.com/agmem/agmem/vcs"
)

// contextBudget is how long agmem context brings the index up to date before it
// answers from the index as it is: it runs before an agent's session starts. What it
// leaves is done by an "agmem index" in the background. AGMEM_CONTEXT_BUDGET (a Go
// duration, "500ms") changes it, for a machine too slow for it or a test on a busy one;
// a value that does not read as one is the default's.
func contextBudget(getenv func(string) string) time.Duration {
	if d, err := time.ParseDuration(getenv("AGMEM_CONTEXT_BUDGET")); err == nil && d > 0 {
		return d
	}
	return 60 * time.Millisecond
}

func newContextCommand(e *env) *ucli.Command {
	return &ucli.Command{
		Name:  "context",
		Usage: "what an agent is told of its project when its session starts",
		Description: "Tells of the project's most recent sessions, newest first, one line each, then how to\n" +
			"learn more; at most [context] max_chars characters (6,000; never above 10,000). The\n" +
			"project is --project, else the git worktree around the payload's cwd when a SessionStart\n" +
			"hook payload is on stdin (else that cwd), else the git worktree around the working\n" +
			"directory, else the directory (a repository of the home directory is not looked at\n" +
			"from below it). As a\n" +
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
			return runContext(e, repo, sessionstart.Flags{Project: c.String("project"), Format: c.String("format"), Agent: c.String("agent")})
		},
	}
}

func runContext(e *env, repo memrepo.Repo, f sessionstart.Flags) error {
	cfg, err := loadConfig(e, repo)
	if err != nil {
		return err
	}
	r, err := sessionstart.Ask(repo, cfg, e.getenv, f, sessionstart.ReadPayload(e.stdin))
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if r.GiveKept(self, e.stdout, e.stderr) {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), contextBudget(e.getenv))
	defer cancel()
	m, err := recall.OpenForContext(ctx, r.Repo)
	if err != nil {
		return hint.With(err, `the search index is only derived: "agmem verify" checks what it is made from`)
	}
	defer m.Close()
	behind, wait := m.Lag()
	late := ctx.Err() != nil || behind != ""
	switch {
	case late && behind != "" && !wait: // an update failed: the background would fail the same
		warn(e, errors.New(behind))
	case late:
		// An empty or short block looks like a project nothing is known of: say why.
		sessionstart.IndexInBackground(self, repo)
		warn(e, hint.With(errors.New("the search index is behind the memory, and is brought up to date in the background: this block may leave out what it has not read yet"),
			"run agmem context again in a moment, or agmem index to wait for it"))
	}
	block, err := m.Context(r.Project, r.MaxChars)
	if err != nil {
		return err
	}
	r.Give(e.stdout, e.stderr, block)
	if !late && block.Text != "" {
		// For the next session's start: the context hook gives it without the index.
		if err := m.KeepForHook(repo, r.Project, r.MaxChars); err != nil {
			warn(e, hint.With(fmt.Errorf("the context block was not kept for the hook: %w", err),
				"the hook answers from the index meanwhile"))
		}
	}
	return nil
}

// updateInBackground starts "agmem index" with this agmem, and does not wait for it;
// done is closed when it ends (nil when it could not start).
func updateInBackground(repo memrepo.Repo) (done <-chan struct{}) {
	if self, err := os.Executable(); err == nil {
		return sessionstart.IndexInBackground(self, repo)
	}
	return nil
}

// oneAtATime is start, called again only once what it started last has ended: a
// second agmem index while the first still makes the index would only wait on its
// write lock, and fail.
func oneAtATime(start func() <-chan struct{}) func() {
	var running <-chan struct{}
	return func() {
		if running != nil {
			select {
			case <-running:
			default:
				return
			}
		}
		running = start()
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
			git, err := vcs.Open(repo.Root)
			if err != nil {
				return err
			}
			update := recall.UpdateIndex
			if c.Bool("rebuild") {
				update = recall.RebuildIndex
			}
			u, err := update(repo.StateDir(), git, repo.Journal())
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "indexed %d entries of %d commits in %s\n", u.Entries, u.Commits, u.Took.Round(time.Millisecond))
			return nil
		}),
	}
}
