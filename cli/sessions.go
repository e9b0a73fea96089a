package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/recall"
)

func newSessionsCommand(e *env) *ucli.Command {
	var asJSON bool
	return &ucli.Command{
		Name:  "sessions",
		Usage: "list every session in the journal or the git history",
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "json", Usage: "one JSON object per session", Destination: &asJSON},
		},
		Action: onRepo(e, func(_ *ucli.Context, repo memrepo.Repo) error {
			return runSessions(e, repo, asJSON)
		}),
	}
}

func runSessions(e *env, repo memrepo.Repo, asJSON bool) error {
	rows, err := recall.ListSessions(repo)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(e.stdout)
	defer w.Flush()
	if asJSON {
		enc := json.NewEncoder(w)
		for _, r := range rows {
			enc.Encode(r)
		}
		return nil
	}
	if len(rows) == 0 {
		fmt.Fprintln(w, "no sessions yet")
		return nil
	}
	fmt.Fprintf(w, "%-38s  %-20s  %-20s  %6s  %6s  %7s  %-12s  %s\n", "SESSION", "FIRST", "LAST", "OBS", "EVENTS", "PENDING", "SOURCE", "REPO")
	for _, r := range rows {
		fmt.Fprintf(w, "%-38s  %-20s  %-20s  %6d  %6d  %7d  %-12s  %s\n", r.ID, r.First.Format(time.RFC3339),
			r.Last.Format(time.RFC3339), r.Observations, r.Events, r.Pending, orDash(clip(r.Source, 24)), clip(r.Repo, 64))
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
