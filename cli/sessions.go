package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/recall"
)

// defaultSessions is how many sessions agmem sessions lists without --all or --limit.
const defaultSessions = 20

func newSessionsCommand(e *env) *ucli.Command {
	var asJSON, all bool
	limit := defaultSessions
	return &ucli.Command{
		Name:  "sessions",
		Usage: "list the sessions of the journal and the git history, the most recent last",
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "json", Usage: "one JSON object per session", Destination: &asJSON},
			&ucli.IntFlag{Name: "limit", Usage: "list the `N` sessions active most recently", Value: defaultSessions, Destination: &limit},
			&ucli.BoolFlag{Name: "all", Usage: "list every session", Destination: &all},
		},
		Action: onRepo(e, func(_ *ucli.Context, repo memrepo.Repo) error {
			if limit < 1 {
				return hint.With(fmt.Errorf("--limit %d: must be 1 or more", limit), "leave --limit out for the last 20, or use --all")
			}
			if all {
				limit = 0
			}
			return runSessions(e, repo, asJSON, limit)
		}),
	}
}

// runSessions lists the limit sessions active most recently (0: all), oldest first.
func runSessions(e *env, repo memrepo.Repo, asJSON bool, limit int) error {
	// The index is brought up to date for at most a second; then read as it is, and
	// agmem index finishes in the background (a rebuild after an upgrade, a pull).
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	rows, total, lag, err := recall.RecentSessions(ctx, repo, limit)
	if ctx.Err() != nil {
		updateInBackground(repo)
	}
	switch {
	case err != nil:
		return err
	case lag != "" && limit == 0:
		// Every session asked for: read from git, all of it, rather than some.
		if rows, err = recall.ListSessions(repo); err != nil {
			return err
		}
		total = len(rows)
	case lag != "":
		report(e.stderr, errors.New(lag))
	}
	older := total - len(rows)
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
		fmt.Fprintf(w, "%-38s  %-20s  %-20s  %6d  %6d  %7d  %-12s  %s\n", hint.Block(r.ID), r.First.Format(time.RFC3339),
			r.Last.Format(time.RFC3339), r.Observations, r.Events, r.Pending, orDash(clip(r.Source, 24)), clip(r.Repo, 64))
	}
	if older > 0 {
		fmt.Fprintf(w, "(%d older sessions not shown: agmem sessions --all, or --limit N)\n", older)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
