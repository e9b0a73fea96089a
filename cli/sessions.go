package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/recall"
	"github.com/agmem/agmem/vcs"
)

// sessionRow is one line of `agmem sessions`.
type sessionRow struct {
	ID           string    `json:"session_id"`
	First        time.Time `json:"first"`
	Last         time.Time `json:"last"`
	Observations int       `json:"observations"`
	Events       int       `json:"events"`
	Pending      int       `json:"pending"`
	Source       string    `json:"source,omitempty"`
	From         string    `json:"from"` // "journal", or "git" for a session only the history holds
	Repo         string    `json:"repo"` // "local", or the fetched branch of the repo it came from: "origin/agents/<id>"
}

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
	rows, err := listSessions(repo)
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

// listSessions joins what the journal knows with what only git holds.
func listSessions(repo memrepo.Repo) ([]sessionRow, error) {
	infos, err := repo.Journal().Sessions()
	if err != nil {
		return nil, err
	}
	var rows []sessionRow
	known := map[string]bool{}
	for _, s := range infos {
		known[s.ID] = true
		rows = append(rows, sessionRow{ID: s.ID, First: s.First, Last: s.Last, Observations: s.Observations,
			Events: s.Events, Pending: s.Pending + s.PendingEvents, Source: s.Source, From: "journal", Repo: recall.Local})
	}
	git, err := vcs.Open(repo.Root)
	if err != nil {
		return nil, err
	}
	fromGit, err := recall.Summaries(git, func(id string) bool { return known[id] })
	if err != nil {
		return nil, fmt.Errorf("read sessions from git: %w", err)
	}
	for id, s := range fromGit {
		rows = append(rows, sessionRow{ID: id, First: s.First, Last: s.Last, Observations: s.Observations,
			Events: s.Events, Source: s.Source, From: "git", Repo: s.Repo})
	}
	sort.SliceStable(rows, func(a, b int) bool { return rows[a].Last.Before(rows[b].Last) })
	return rows, nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
