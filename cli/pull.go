package cli

import (
	"fmt"

	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/gitsync"
	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/internal/shell"
)

func newPullCommand(e *env) *ucli.Command {
	return &ucli.Command{
		Name:      "pull",
		Usage:     "fetch the history every memory repo published on a git remote, for sessions and replay",
		ArgsUsage: "[REMOTE]",
		Description: "Fetches each agents/<repo id> branch of REMOTE (default: [sync] remote, origin) into\n" +
			"REMOTE/agents/<repo id>. \"agmem sessions\" then lists the sessions of every agent, with\n" +
			"the repo each came from, and \"agmem replay\" shows any of them. Your own branch, journal\n" +
			"and worktree are left as they are.",
		Action: func(c *ucli.Context) error {
			return onRemote(c, e, func(repo memrepo.Repo, opts gitsync.Options) error { return runPull(e, repo, opts) })
		},
	}
}

func runPull(e *env, repo memrepo.Repo, opts gitsync.Options) error {
	opts.Whole = func() {
		fmt.Fprintf(e.stderr, "agmem: a first pull from %s: fetching every agent's whole history, which may take minutes\n", opts.Remote)
	}
	moved, err := gitsync.Pull(repo, opts)
	if err != nil {
		return syncError(err)
	}
	if len(moved) == 0 {
		fmt.Fprintf(e.stdout, "already up to date with %s\n", opts.Remote)
		return nil
	}
	updateIndex(e, repo, nil)
	for _, u := range moved {
		switch {
		case u.Old.IsZero():
			fmt.Fprintf(e.stdout, "%s: new, at %s\n", u.Name, u.New.String()[:7])
		case u.New.IsZero():
			fmt.Fprintf(e.stdout, "%s: gone from %s, and from here: what it held is found no more\n", u.Name, opts.Remote)
		case u.Lost > 0:
			fmt.Fprintf(e.stdout, "%s: %s..%s, rewritten\n", u.Name, u.Old.String()[:7], u.New.String()[:7])
			warn(e, hint.With(fmt.Errorf("%s was rewritten on %s: %d commit(s) of what it held are on it no more, and are found no more",
				u.Name, opts.Remote, u.Lost), fmt.Sprintf("to keep them here: git -C %s branch rescued-%s %s",
				shell.Readable(repo.Root), u.Old.String()[:7], u.Old.String())))
		default:
			fmt.Fprintf(e.stdout, "%s: %s..%s\n", u.Name, u.Old.String()[:7], u.New.String()[:7])
		}
	}
	return nil
}
