package cli

import (
	"encoding/json"
	"fmt"

	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/flush"
	"github.com/agmem/agmem/memrepo"
)

func newFlushCommand(e *env) *ucli.Command {
	var asJSON bool
	return &ucli.Command{
		Name:  "flush",
		Usage: "commit every pending observation: one commit per session",
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "json", Usage: "one JSON object per commit", Destination: &asJSON},
		},
		Action: onRepo(e, func(_ *ucli.Context, repo memrepo.Repo) error {
			return runFlush(e, repo, asJSON)
		}),
	}
}

func runFlush(e *env, repo memrepo.Repo, asJSON bool) error {
	git, err := repo.Git()
	if err != nil {
		return err
	}
	commits, err := flush.Run(repo.StateDir(), repo.Journal(), git)
	for _, c := range commits {
		if asJSON {
			line, _ := json.Marshal(map[string]any{"commit": c.Hash, "session_id": c.Session,
				"observations": c.Observations, "events": c.Events})
			fmt.Fprintf(e.stdout, "%s\n", line)
		} else {
			fmt.Fprintf(e.stdout, "%s %s %d observations\n", c.Hash, c.Session, c.Observations)
		}
	}
	if err != nil {
		return withHint(err, "nothing recorded is lost: run \"agmem flush\" again once the cause is fixed")
	}
	return nil
}
