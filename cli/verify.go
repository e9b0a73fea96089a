package cli

import (
	"encoding/json"
	"fmt"

	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/internal/config"
	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/llm"
	"github.com/agmem/agmem/maintain"
	"github.com/agmem/agmem/vcs"
)

func newVerifyCommand(e *env) *ucli.Command {
	var repair, asJSON bool
	return &ucli.Command{
		Name:  "verify",
		Usage: "cross-check the journal and the git history; exit 1 if they disagree",
		Description: "Checks that every committed observation is on the branch exactly once, that each\n" +
			"commit's trailers match its session record, that HEAD and the worktree hold every\n" +
			"file agmem committed and nothing under current/ or sessions/ that no record\n" +
			"explains, and lists unfinished flushes and what is pending.\n\n" +
			"--repair finishes unfinished flushes, commits again what a branch moved by hand\n" +
			"lost, and restores agmem's files deleted from the worktree, then checks again.\n" +
			"It deletes nothing recorded and never overwrites a file edited by hand. Its\n" +
			"commit messages come from agmem's template.",
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "repair", Usage: "resolve what can be resolved, then check again", Destination: &repair},
			&ucli.BoolFlag{Name: "json", Usage: "one JSON document", Destination: &asJSON},
		},
		Action: onRepo(e, func(_ *ucli.Context, repo memrepo.Repo) error {
			return runVerify(e, repo, repair, asJSON)
		}),
	}
}

func runVerify(e *env, repo memrepo.Repo, repair, asJSON bool) error {
	git, err := vcs.Open(repo.Root)
	if err != nil {
		return err
	}
	var out struct {
		Repaired *maintain.Repaired `json:"repaired,omitempty"`
		*maintain.Report
	}
	if repair {
		var cfg *config.Config
		if cfg, err = loadConfig(e, repo); err != nil {
			return err
		}
		// Its flush signs as any other, and writes the template's messages.
		opts := flushSettings(cfg)
		opts.LLM, opts.Warn = llm.Settings{}, func(err error) { warn(e, err) }
		var done maintain.Repaired
		done, out.Report, err = maintain.Repair(repo.StateDir(), repo.Journal(), git, opts)
		out.Repaired = &done
		if !asJSON {
			printRepaired(e, done)
		}
	} else {
		out.Report, err = maintain.Check(repo.StateDir(), repo.Journal(), git)
	}
	if err != nil {
		return hint.With(err, "nothing recorded is lost: run \"agmem verify\" again once the cause is fixed")
	}
	r := out.Report
	if asJSON {
		line, _ := json.Marshal(out)
		fmt.Fprintf(e.stdout, "%s\n", line)
	} else {
		printReport(e, r)
	}
	if r.Consistent() {
		return nil
	}
	return hint.With(fmt.Errorf("the journal and branch %s are not consistent: %d problem(s)", r.Branch, len(r.Problems)),
		verifyHint(r, repair))
}

// verifyHint says what to do about the problems a check found, the most pressing first.
func verifyHint(r *maintain.Report, repaired bool) string {
	switch {
	case r.Damaged():
		return "verify --repair leaves a damaged journal alone: move .agmem/journal.db aside to record again (what is in git is kept; what was not yet flushed stays only in the file moved)"
	case r.Repairable() && !repaired:
		return `run "agmem verify --repair"`
	case r.Has(maintain.PendingCommitted):
		return "verify --repair flushes nothing while a pending entry is already committed: undo what moved the branch, or report this"
	case r.Has(maintain.OnOtherBranch):
		return `switch back to the branch that holds them ("git switch NAME"), or merge it into this one`
	}
	return "verify --repair never overwrites or deletes a file: keep or undo the change with git"
}

func printRepaired(e *env, done maintain.Repaired) {
	if done.Requeued > 0 {
		fmt.Fprintf(e.stdout, "repair: %d entries whose commit the branch lost are pending again\n", done.Requeued)
	}
	for _, c := range done.Commits {
		fmt.Fprintf(e.stdout, "repair: committed %s %s %d observations\n", c.Hash, hint.Block(c.Session), c.Observations)
	}
	for _, p := range done.Restored {
		fmt.Fprintf(e.stdout, "repair: restored %s from HEAD\n", p)
	}
}

func printReport(e *env, r *maintain.Report) {
	for _, p := range r.Problems {
		fmt.Fprintln(e.stdout, hint.OneLine(p.String()))
	}
	if r.PendingObservations+r.PendingEvents > 0 {
		fmt.Fprintf(e.stdout, "pending: %d observations, %d events (the next flush commits them)\n", r.PendingObservations, r.PendingEvents)
	}
	verdict := "consistent"
	if !r.Consistent() {
		verdict = fmt.Sprintf("%d problem(s)", len(r.Problems))
	}
	fmt.Fprintf(e.stdout, "branch %s: %d agmem commits, %d observations, %d events: %s\n",
		r.Branch, r.Commits, r.Observations, r.Events, verdict)
}
