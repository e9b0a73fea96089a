package cli

import (
	"encoding/json"
	"errors"
	"fmt"

	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/flush"
	"github.com/agmem/agmem/internal/config"
	"github.com/agmem/agmem/internal/failpoint"
	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/internal/priority"
	"github.com/agmem/agmem/llm"
	"github.com/agmem/agmem/recall"
	"github.com/agmem/agmem/sign"
	"github.com/agmem/agmem/vcs"
)

type flushOptions struct {
	json  bool // one JSON object per commit
	noLLM bool // the template writes every message, whatever the configuration
}

func newFlushCommand(e *env) *ucli.Command {
	var o flushOptions
	return &ucli.Command{
		Name:  "flush",
		Usage: "commit every pending observation: one commit per session",
		Description: "With an API key ($OPENAI_API_KEY or [llm] api_key), a language model writes each\n" +
			"commit's message, within [llm] timeout for the whole flush; agmem's template\n" +
			"writes any it cannot. The Agmem-Message-Model trailer says which wrote it.",
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "json", Usage: "one JSON object per commit", Destination: &o.json},
			&ucli.BoolFlag{Name: "no-llm", Usage: "write every message from agmem's template, asking no model", Destination: &o.noLLM},
		},
		Action: onRepo(e, func(_ *ucli.Context, repo memrepo.Repo) error {
			return runFlush(e, repo, o)
		}),
	}
}

// flushSettings are how the configuration has flushes write and sign their commits.
func flushSettings(cfg *config.Config) flush.Options {
	return flush.Options{LLM: llmSettings(cfg), Sign: sign.Mode(cfg.Audit.Sign), MaxBatch: cfg.Flush.MaxBatch}
}

// llmSettings are the configured LLM's settings for flush, none when it is off.
func llmSettings(cfg *config.Config) llm.Settings {
	if !cfg.LLM.Enabled {
		return llm.Settings{}
	}
	return llm.Settings{APIKey: cfg.LLM.APIKey, BaseURL: cfg.LLM.BaseURL, Model: cfg.LLM.Model,
		Budget: cfg.LLM.Timeout}
}

func runFlush(e *env, repo memrepo.Repo, o flushOptions) error {
	priority.Yield()
	cfg, err := loadConfig(e, repo)
	if err != nil {
		return err
	}
	git, err := vcs.Open(repo.Root)
	if err != nil {
		return err
	}
	opts := flushSettings(cfg)
	opts.Warn = func(err error) { warn(e, err) }
	if o.noLLM {
		opts.LLM = llm.Settings{}
	}
	commits, err := flush.Run(repo.StateDir(), repo.Journal(), git, opts)
	for _, c := range commits {
		if o.json {
			line, _ := json.Marshal(map[string]any{"commit": c.Hash, "session_id": c.Session,
				"observations": c.Observations, "events": c.Events})
			fmt.Fprintf(e.stdout, "%s\n", line)
		} else {
			fmt.Fprintf(e.stdout, "%s %s %d observations\n", c.Hash, hint.Block(c.Session), c.Observations)
		}
		if vcs.OneLine(c.Session) != c.Session { // taken by an older agmem, which took such ids
			warn(e, hint.With(fmt.Errorf("session %q: its commit's Agmem-Session trailer cannot name it as it is (one line, trimmed), so verify and audit report the commit", c.Session),
				"nothing is lost: replay and search read it; agmem refuses such a session id now"))
		}
	}
	if err != nil {
		return hint.After(err, "nothing recorded is lost: run \"agmem flush\" again once the cause is fixed")
	}
	if len(commits) > 0 {
		failpoint.Hit("flush-before-index") // committed, and the index does not know it yet
		updateIndex(e, repo, git)
	}
	return nil
}

// updateIndex brings the search index up to date after a command changed what git or
// the journal holds. The index is derived, and the next reader brings it up to date
// if this cannot: a failure is a warning.
func updateIndex(e *env, repo memrepo.Repo, git *vcs.Git) {
	if git == nil {
		var err error
		if git, err = vcs.Open(repo.Root); err != nil {
			warn(e, fmt.Errorf("search index not updated: %w", err))
			return
		}
	}
	if _, err := recall.UpdateIndex(repo.StateDir(), git, repo.Journal()); err != nil {
		warn(e, fmt.Errorf("search index not updated: %w", err))
	}
}

// warn reports a problem that did not stop the command, as report does an error.
func warn(e *env, err error) {
	var fallback *llm.Fallback
	if errors.As(err, &fallback) && fallback.Hint != "" {
		err = hint.With(err, fallback.Hint)
	}
	report(e.stderr, err)
}
