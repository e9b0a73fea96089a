package cli

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/daemon"
	"github.com/agmem/agmem/gitsync"
	"github.com/agmem/agmem/internal/config"
	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/sign"
	"github.com/agmem/agmem/vcs"
)

type statusReport struct {
	Repo       string           `json:"repo"`
	Branch     string           `json:"branch"`
	Head       string           `json:"head,omitempty"`
	Pending    int              `json:"pending_observations"`
	PendingEvt int              `json:"pending_events"`
	Sessions   []pendingSession `json:"pending_sessions"`
	// Spooled are calls recorded while another process held the journal, kept aside
	// for its next write (waiting), and those of them it could not add (refused).
	Spooled   *spooled      `json:"spooled,omitempty"`
	LastFlush *time.Time    `json:"last_flush,omitempty"`
	Signing   signingStatus `json:"signing"`
	// Sync is how the branch stands to its copy on [sync] remote; none without that remote.
	Sync *gitsync.Standing `json:"sync,omitempty"`
	// ConfigError is why .agmem/config.toml (or the environment) does not load: every
	// record and flush fails on it.
	ConfigError string `json:"config_error,omitempty"`
	Daemon      struct {
		Running bool `json:"running"`
		PID     int  `json:"pid,omitempty"`
	} `json:"daemon"`
}

// signingStatus is how flushes sign, and whether the last commit was signed.
type signingStatus struct {
	Mode string `json:"mode"` // off, best-effort or required
	Key  string `json:"key,omitempty"`
	// Last is the last commit a flush wrote; Signed whether it is, Unsigned why not
	// where it was to be.
	Last     string `json:"last_commit,omitempty"`
	Signed   bool   `json:"signed"`
	Unsigned string `json:"unsigned,omitempty"`
}

type spooled struct {
	Waiting int `json:"waiting"`
	Refused int `json:"refused"`
}

type pendingSession struct {
	ID           string              `json:"session_id"`
	Observations int                 `json:"observations"`
	Events       int                 `json:"events"`
	ByType       map[memory.Type]int `json:"by_type"`
}

func newStatusCommand(e *env) *ucli.Command {
	var asJSON bool
	return &ucli.Command{
		Name:  "status",
		Usage: "pending observations per session and memory type, the last commit, the daemon",
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "json", Usage: "one JSON document", Destination: &asJSON},
		},
		Action: onRepo(e, func(_ *ucli.Context, repo memrepo.Repo) error {
			return runStatus(e, repo, asJSON)
		}),
	}
}

func runStatus(e *env, repo memrepo.Repo, asJSON bool) error {
	s := statusReport{Repo: repo.Root, Sessions: []pendingSession{}}
	if st, err := daemon.Probe(repo); err == nil {
		s.Daemon.Running, s.Daemon.PID = true, st.PID
	}
	j := repo.Journal()
	infos, err := j.Sessions()
	if err != nil {
		return err
	}
	for _, in := range infos {
		if in.Pending+in.PendingEvents == 0 {
			continue
		}
		s.Pending += in.Pending
		s.PendingEvt += in.PendingEvents
		s.Sessions = append(s.Sessions, pendingSession{ID: in.ID, Observations: in.Pending,
			Events: in.PendingEvents, ByType: in.PendingByType})
	}
	if waiting, refused, err := j.Spooled(); err != nil {
		return err
	} else if waiting+refused > 0 {
		s.Spooled = &spooled{waiting, refused}
	}
	if last, err := j.LastFlush(); err != nil {
		return err
	} else if last != nil {
		s.LastFlush = &last.At
	}
	git, err := vcs.Open(repo.Root)
	if err != nil {
		return err
	}
	branch, tip, err := git.Head()
	if err != nil {
		return err
	}
	s.Branch = branch.Short()
	mode := sign.Auto
	// A configuration that does not load stops every record and flush, which hooks run
	// where nobody reads their errors: status says so, and fails.
	cfg, cfgErr := loadConfig(e, repo)
	if cfgErr == nil {
		mode = sign.Mode(cfg.Audit.Sign)
	} else {
		s.ConfigError = cfgErr.Error()
	}
	if settings := sign.ForRepo(mode, git); settings.On() {
		s.Signing.Mode, s.Signing.Key = string(settings.Mode), settings.Describe()
	} else {
		s.Signing.Mode = string(sign.Off)
	}
	if last, err := j.LastCommitted(); err != nil {
		return err
	} else if last != nil {
		s.Signing.Last, s.Signing.Signed, s.Signing.Unsigned = last.Commit, last.Signing.Signed, last.Signing.Failed
	}
	if !tip.IsZero() {
		s.Head = tip.String()
	}
	var syncCfg config.Sync // [sync]'s defaults where the configuration does not load
	if cfg != nil {
		syncCfg = cfg.Sync
	}
	remote := syncCfg.RemoteName()
	if _, err := git.RemoteURL(remote); err == nil {
		standing, err := gitsync.StandingOn(repo, git, remote)
		if err != nil {
			return err
		}
		s.Sync = &standing
	}
	if asJSON {
		out, _ := json.MarshalIndent(s, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", out)
		return configStops(cfgErr)
	}
	// Read only for the text: the first read of an object in a big pack is most of what
	// status costs on a year's repo, and scripts polling --json need none of it.
	var headLine string
	if !tip.IsZero() {
		if c, err := git.Commit(tip); err == nil {
			headLine = fmt.Sprintf("%s %s (%s)", vcs.Short(tip.String()), clip(strings.SplitN(c.Message, "\n", 2)[0], 72),
				c.Committer.When.UTC().Format(time.DateTime)+" UTC")
		}
	}
	fmt.Fprintf(e.stdout, "repo:     %s (branch %s)\n", s.Repo, s.Branch)
	fmt.Fprintf(e.stdout, "last commit: %s\n", orDash(headLine))
	fmt.Fprintf(e.stdout, "pending:  %d observations, %d events in %d sessions\n", s.Pending, s.PendingEvt, len(s.Sessions))
	for i, p := range s.Sessions {
		if i == defaultSessions {
			fmt.Fprintf(e.stdout, "  ... and %d more session(s) (agmem status --json lists them all)\n", len(s.Sessions)-i)
			break
		}
		var types []string
		for t, n := range p.ByType {
			types = append(types, fmt.Sprintf("%s %d", t, n))
		}
		sort.Strings(types)
		fmt.Fprintf(e.stdout, "  %s  %s  events %d\n", hint.Block(p.ID), strings.Join(types, "  "), p.Events)
	}
	if sp := s.Spooled; sp != nil && sp.Waiting > 0 {
		fmt.Fprintf(e.stdout, "kept aside: %d call(s) recorded while another agmem held the journal; the next record or flush adds them\n", sp.Waiting)
	}
	if sp := s.Spooled; sp != nil && sp.Refused > 0 {
		fmt.Fprintf(e.stdout, "set aside: %d call(s) kept aside that the journal refused: see .agmem/spool/*.refused\n", sp.Refused)
	}
	if s.LastFlush != nil {
		fmt.Fprintf(e.stdout, "last flush: %s UTC\n", s.LastFlush.UTC().Format(time.DateTime))
	} else {
		fmt.Fprintln(e.stdout, "last flush: never")
	}
	fmt.Fprintf(e.stdout, "signing:  %s\n", hint.OneLine(s.Signing.line()))
	fmt.Fprintf(e.stdout, "sync:     %s\n", syncLine(s.Sync, remote))
	if s.Daemon.Running {
		fmt.Fprintf(e.stdout, "daemon:   running (pid %d)\n", s.Daemon.PID)
	} else {
		fmt.Fprintln(e.stdout, "daemon:   not running")
	}
	if cfgErr != nil {
		fmt.Fprintln(e.stdout, "config:   BROKEN: nothing is recorded or flushed until it is mended (see below)")
	}
	return configStops(cfgErr)
}

// syncLine is how agmem status shows how the branch stands to its copy on the remote,
// as the last push or pull there left it.
func syncLine(s *gitsync.Standing, remote string) string {
	switch {
	case s == nil:
		return fmt.Sprintf("no git remote %q to push to (git remote add %s URL)", remote, remote)
	case !s.Pushed:
		return fmt.Sprintf("%s: never pushed (agmem push)", remote)
	case s.Ahead < 0:
		return fmt.Sprintf("%s: pushed; how far this branch is past it could not be read", remote)
	case s.Parted:
		return fmt.Sprintf("%s: its copy of this branch holds commits the branch lacks, so a push is refused (agmem push says what to do)", remote)
	case s.Ahead > 0:
		return fmt.Sprintf("%s: %d commit(s) not pushed (agmem push)", remote, s.Ahead)
	}
	return fmt.Sprintf("%s: every commit pushed, as of the last push or pull", remote)
}

// configStops is err, a configuration that does not load, said as what it stops.
func configStops(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("every record and flush fails: %w", err) // with loadConfig's hint
}

// line is how agmem status shows the signing status.
func (s signingStatus) line() string {
	l := s.Mode
	if s.Key != "" {
		l += " (" + s.Key + ")"
	}
	switch {
	case s.Last == "":
	case s.Signed:
		l += "; last commit " + vcs.Short(s.Last) + " signed"
	case s.Unsigned != "":
		l += "; last commit " + vcs.Short(s.Last) + " UNSIGNED: " + s.Unsigned
	default:
		l += "; last commit " + vcs.Short(s.Last) + " unsigned"
	}
	return l
}
