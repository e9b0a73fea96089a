package cli

import (
	"fmt"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/internal/config"
	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/maintain"
)

func newGCCommand(e *env) *ucli.Command {
	var keep string
	return &ucli.Command{
		Name:  "gc",
		Usage: "keep the memory repo small: forget old committed sessions in the journal, compact it, pack git's objects",
		Description: "The journal forgets each session that is wholly committed and whose last entry is\n" +
			"older than --keep: replay and sessions read it from git from then on. Pending\n" +
			"observations are never dropped. Then the journal file is compacted and git's\n" +
			"objects packed (git gc where git is installed). The daemon does this once a day.",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "keep", Destination: &keep,
				Usage: "keep committed sessions this recent, e.g. 7d or 36h (default: [sync] keep, 7d)"},
		},
		Action: onRepo(e, func(_ *ucli.Context, repo memrepo.Repo) error { return runGC(e, repo, keep) }),
	}
}

func runGC(e *env, repo memrepo.Repo, keepFlag string) error {
	cfg, err := loadConfig(e, repo)
	if err != nil {
		return err
	}
	keep := cfg.Sync.KeepFor()
	if keepFlag != "" {
		if keep, err = config.ParseKeep(keepFlag); err != nil {
			return hint.With(fmt.Errorf("--keep %s", err), "e.g. --keep 7d, --keep 36h")
		}
	}
	c, err := maintain.GC(repo, keep, time.Now())
	if err != nil {
		return hint.After(err, `nothing recorded is lost: run "agmem gc" again once the cause is fixed`)
	}
	size := humanSize(c.JournalBefore) + " -> " + humanSize(c.JournalAfter)
	if c.JournalBefore == c.JournalAfter {
		size = humanSize(c.JournalBefore) + ", not compacted (less than a quarter of it is free, which the journal reuses)"
	}
	fmt.Fprintf(e.stdout, "journal: forgot %d session(s), %d entries older than %s and committed; %s\n",
		c.Forgotten.Sessions, c.Forgotten.Entries, config.FormatKeep(keep), size)
	fmt.Fprintf(e.stdout, "git objects: packed by %s; %s -> %s\n", c.Objects.By, humanSize(c.Objects.Before), humanSize(c.Objects.After))
	return nil
}

// humanSize writes a byte count as people read it, exact below a KiB.
func humanSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}
