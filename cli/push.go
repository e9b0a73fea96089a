package cli

import (
	"errors"
	"fmt"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/gitsync"
	"github.com/agmem/agmem/internal/config"
	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/memrepo"
)

func newPushCommand(e *env) *ucli.Command {
	return &ucli.Command{
		Name:      "push",
		Usage:     "publish this memory repo's commits on a git remote, as the branch agents/<repo id>",
		ArgsUsage: "[REMOTE]",
		Description: "Pushes the branch to REMOTE (default: [sync] remote, origin) as agents/<repo id>, a\n" +
			"branch no other memory repo writes: any number of repos can push to one remote at\n" +
			"once. It pushes what is committed; \"agmem flush\" commits what is pending.",
		Action: func(c *ucli.Context) error {
			return onRemote(c, e, func(repo memrepo.Repo, opts gitsync.Options) error { return runPush(e, repo, opts) })
		},
	}
}

func runPush(e *env, repo memrepo.Repo, opts gitsync.Options) error {
	opts.Whole = func() {
		fmt.Fprintf(e.stderr, "agmem: %s has no copy of this branch: sending its whole history, which may take minutes\n", opts.Remote)
	}
	p, err := gitsync.Push(repo, opts)
	if err != nil {
		return syncError(err)
	}
	switch {
	case p.Tip.IsZero():
		fmt.Fprintf(e.stdout, "nothing to push: %s has no commits yet\n", p.Branch.Short())
	case p.UpToDate:
		fmt.Fprintf(e.stdout, "%s already has %s (%s) as %s\n", p.Remote, p.Branch.Short(), p.Tip.String()[:7], p.As.Short())
	default:
		fmt.Fprintf(e.stdout, "pushed %s (%s) to %s as %s\n", p.Branch.Short(), p.Tip.String()[:7], p.Remote, p.As.Short())
	}
	if b, err := repo.Journal().Backlog(); err == nil && b.Observations > 0 {
		fmt.Fprintf(e.stdout, "%d observation(s) pending: \"agmem flush\" commits them, the next push sends them\n", b.Observations)
	}
	return nil
}

// onRemote is the action of a command that takes one optional argument, the remote
// (default: [sync] remote), and works on the memory repo with the [sync] settings.
func onRemote(c *ucli.Context, e *env, run func(memrepo.Repo, gitsync.Options) error) error {
	if c.NArg() > 1 || strings.HasPrefix(c.Args().First(), "-") {
		return hint.With(fmt.Errorf("%s takes at most one remote, got %q", c.Command.Name, strings.Join(c.Args().Slice(), " ")),
			fmt.Sprintf(`flags go before the remote: agmem %s [--repo DIR] [REMOTE]`, c.Command.Name))
	}
	if c.NArg() == 1 {
		if err := config.CheckRemoteName(c.Args().First()); err != nil {
			return hint.With(fmt.Errorf("%s: %q is no remote's name: it %w", c.Command.Name, c.Args().First(), err),
				"git remote -v lists the repo's remotes; a URL is added as one first: git remote add NAME URL")
		}
	}
	repo, err := openRepo(c, e)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(e, repo)
	if err != nil {
		return err
	}
	return run(repo, syncOptions(cfg, c.Args().First()))
}

// syncOptions are the [sync] settings for a push or pull to remote ("" for [sync] remote).
func syncOptions(cfg *config.Config, remote string) gitsync.Options {
	if remote == "" {
		remote = cfg.Sync.RemoteName()
	}
	return gitsync.Options{Remote: remote, Username: cfg.Sync.Username, Password: cfg.Sync.Password,
		SSHKey: cfg.Sync.SSHKey, Timeout: cfg.Sync.TimeoutOr()}
}

// syncError gives a push or pull failure its hint.
func syncError(err error) error {
	var e *gitsync.Error
	if errors.As(err, &e) && e.Hint != "" {
		return hint.With(err, e.Hint)
	}
	return err
}
