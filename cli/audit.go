package cli

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/audit"
	"github.com/agmem/agmem/flush"
	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/sign"
	"github.com/agmem/agmem/vcs"
)

func newAuditCommand(e *env) *ucli.Command {
	return &ucli.Command{
		Name:  "audit",
		Usage: "prove the history: signatures, records, and the chain of agmem's commits; exit 1 if anything fails",
		Description: "Offline, from this clone alone. Along the first-parent history of the branch and of\n" +
			"every fetched agents/* branch, checks that each commit with agmem's trailers is\n" +
			"signed by an allowed signer (when the repo signs: [audit] sign, or git's\n" +
			"commit.gpgSign), adds exactly its session record and one markdown file per\n" +
			"observation, and carries the trailers that record gives; that no other commit\n" +
			"touches current/ or sessions/; and that the branch holds, unchanged and in order,\n" +
			"every commit this repo's journal says it made. Then reports, per session, what was\n" +
			"redacted (rules and counts, never the secrets) and the context the agent was given\n" +
			"at its start.",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "since", Usage: "only commits from this time on: 2026-11-30, 2026-11-30T09:00 (UTC unless it names its zone), or how long ago (7d)"},
			&ucli.BoolFlag{Name: "require-signed", Usage: "every unsigned agmem commit is a problem, on every branch (for a reviewer's clone)"},
			&ucli.BoolFlag{Name: "json", Usage: "one JSON document"},
		},
		Action: onRepo(e, func(c *ucli.Context, repo memrepo.Repo) error {
			since, err := timeFlag(c, "since", time.Now())
			if err != nil {
				return err
			}
			return runAudit(e, repo, audit.Options{Since: since, RequireSigned: c.Bool("require-signed")}, c.Bool("json"))
		}),
	}
}

func runAudit(e *env, repo memrepo.Repo, o audit.Options, asJSON bool) error {
	cfg, err := loadConfig(e, repo)
	if err != nil {
		return err
	}
	git, err := vcs.Open(repo.Root)
	if err != nil {
		return err
	}
	if err := readJournalSide(repo, git, &o); err != nil {
		return err
	}
	settings := sign.ForRepo(sign.Mode(cfg.Audit.Sign), git)
	r, err := audit.Run(git, settings, o)
	if err != nil {
		return err
	}
	if asJSON {
		// Signers are "Name <email>": kept as they read, not escaped for HTML.
		enc := json.NewEncoder(e.stdout)
		enc.SetEscapeHTML(false)
		enc.Encode(r)
	} else {
		printAudit(e, repo, r)
	}
	if !r.Failed() {
		return nil
	}
	advice := "each problem says what and where: look with \"git show COMMIT\""
	if slices.ContainsFunc(r.Problems, func(p audit.Problem) bool { return p.Kind == "chain" && p.Origin == "local" }) {
		// The ledger keeps what the journal committed: a rewrite is told by every audit
		// that reaches back to it, as it should be, even one made on purpose.
		advice += `; a rewrite of this branch made on purpose (a reset whose observations "agmem verify --repair" committed again) is told by every audit that reaches back to it: --since a time after it audits what came after`
	}
	var pulled []string // the fetched branches with problems, as problems name them
	for _, p := range r.Problems {
		if p.Origin != "local" && p.Origin != "" && !slices.Contains(pulled, p.Origin) {
			pulled = append(pulled, p.Origin)
		}
	}
	where := "branch " + r.Branch
	if len(pulled) > 0 {
		where += " and of " + strings.Join(pulled, ", ")
	}
	return hint.With(fmt.Errorf("audit of %s: %d problem(s)", where, len(r.Problems)), advice)
}

func printAudit(e *env, repo memrepo.Repo, r *audit.Report) {
	line := func(format string, args ...any) { fmt.Fprintln(e.stdout, hint.OneLine(fmt.Sprintf(format, args...))) }
	under := func(format string, args ...any) {
		fmt.Fprintln(e.stdout, "  "+hint.OneLine(fmt.Sprintf(format, args...)))
	}
	line("audit of %s, branch %s at %s", repo.Root, r.Branch, vcs.Short(r.Tip))
	signing := "signing: " + r.Signing
	if r.Allowed != "" {
		signing += "; allowed signers: " + r.Allowed
	}
	line("%s", signing)
	counts := []string{}
	for _, s := range slices.Sorted(maps.Keys(r.Signatures)) {
		counts = append(counts, fmt.Sprintf("%s %d", s, r.Signatures[s]))
	}
	if len(counts) == 0 {
		counts = append(counts, "none")
	}
	ledger := "no journal ledger (a clone): the chain is held to signatures and records alone"
	if r.Ledger > 0 {
		ledger = fmt.Sprintf("the journal's ledger: %d commits", r.Ledger)
	}
	line("commits: %d by agmem (signatures: %s), %d by others; %s", len(r.Commits), strings.Join(counts, ", "), r.Others, ledger)
	for _, s := range r.Sessions {
		// The id as it is, or its escapes: a line's spaces collapse, and the id's must not.
		fmt.Fprintln(e.stdout, "session "+hint.Block(s.ID)+" "+hint.OneLine(fmt.Sprintf("(%s, %s): %d commits, %d observations, %d events, %s to %s",
			cmp.Or(s.Agent, "no agent"), s.Origin, s.Commits, s.Observations, s.Events, s.First.Format(time.DateTime), s.Last.Format(time.DateTime))))
		if s.Redactions > 0 {
			var rules []string
			for _, rule := range slices.Sorted(maps.Keys(s.Redacted)) {
				rules = append(rules, fmt.Sprintf("%s %d", rule, s.Redacted[rule]))
			}
			under("redacted: %d (%s)", s.Redactions, strings.Join(rules, ", "))
		}
		for _, c := range s.Context {
			under("context given at start: %s, %d characters, citing %d entries", c.At.Format(time.DateTime), c.Chars, len(c.Cited))
		}
	}
	if len(r.Problems) == 0 {
		line("problems: none")
	}
	for _, p := range r.Problems {
		at := "" // the commit, where the problem is one commit's
		if p.Commit != "" {
			at = vcs.Short(p.Commit) + " "
		}
		line("FAIL %s %s(%s): %s", p.Kind, at, p.Origin, p.What)
	}
}

// readJournalSide reads the branch's tip, the journal's ledger and its unfinished
// batches under the flush lock, so that all three tell of the same flushes.
func readJournalSide(repo memrepo.Repo, git *vcs.Git, o *audit.Options) error {
	lock, err := flush.Lock(repo.StateDir())
	if err != nil {
		return err
	}
	defer lock.Release()
	branch, err := git.Branch()
	if err != nil {
		return err
	}
	if o.Tip, err = git.Tip(branch); err != nil {
		return err
	}
	j := repo.Journal()
	if o.Ledger, err = j.Ledger(); err != nil {
		return err
	}
	o.Unfinished, err = j.Unfinished()
	return err
}
