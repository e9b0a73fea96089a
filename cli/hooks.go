package cli

import (
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agmem/agmem/internal/shell"

	"github.com/rogpeppe/go-internal/diff"
	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/capture"
	"github.com/agmem/agmem/hooks"
	"github.com/agmem/agmem/internal/config"
	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/memrepo"
)

func newHooksCommand(e *env) *ucli.Command {
	agentList := strings.Join(hooks.Names(), "|")
	install := perAgent(e, &ucli.Command{
		Name:      "install",
		Usage:     "merge agmem's hooks into an agent's settings, recording into this memory repo",
		ArgsUsage: agentList,
		Description: "Writes into the agent's user settings (~/.claude/settings.json, ~/.codex/hooks.json,\n" +
			"~/.gemini/settings.json, ~/.cursor/hooks.json), or with --scope project into the\n" +
			"current directory's. Other settings and hooks are kept byte for byte; the file as it\n" +
			"was before agmem first changed it is kept beside it as <file>.agmem-backup.",
	}, func() []ucli.Flag { return hooksFlags(true) }, "install agmem's hooks for ", runHooksInstall)
	uninstall := perAgent(e, &ucli.Command{
		Name:      "uninstall",
		Usage:     "remove agmem's hooks from an agent's settings, and nothing else",
		ArgsUsage: agentList,
	}, func() []ucli.Flag { return hooksFlags(false) }, "remove agmem's hooks for ", runHooksUninstall)
	var asJSON bool
	status := &ucli.Command{
		Name:  "status",
		Usage: "for each agent and scope: the settings file, which events have agmem's hooks, where they record",
		Flags: []ucli.Flag{&ucli.BoolFlag{Name: "json", Usage: "one JSON document", Destination: &asJSON}},
		Action: func(c *ucli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			return runHooksStatus(e, asJSON)
		},
	}
	return &ucli.Command{
		Name:        "hooks",
		Usage:       "install, remove or show agmem's hooks in an agent's settings (" + strings.ReplaceAll(agentList, "|", ", ") + ")",
		Subcommands: []*ucli.Command{install, uninstall, status},
		Action: func(c *ucli.Context) error {
			if c.Args().Present() {
				return hint.With(fmt.Errorf("unknown hooks command %q", c.Args().First()), `run "agmem hooks --help"`)
			}
			return ucli.ShowSubcommandHelp(c)
		},
	}
}

// perAgent gives cmd a subcommand per agent running run for it; cmd itself, with no
// agent, says it needs one. The agents are subcommands so that flags work after their
// name (urfave/cli stops reading flags at the first argument): each level takes the
// flags flags makes, and the nearest one given wins (lineageString).
func perAgent(e *env, cmd *ucli.Command, flags func() []ucli.Flag, usage string, run func(*ucli.Context, agentRun) error) *ucli.Command {
	cmd.Flags = flags()
	for _, a := range hooks.Agents {
		var aliases []string // the agent by its source's name too, as --agent takes it
		if source := capture.Agents[a.Name]; source != "" && source != a.Name {
			aliases = []string{source}
		}
		cmd.Subcommands = append(cmd.Subcommands, &ucli.Command{
			Name:    a.Name,
			Aliases: aliases,
			Usage:   usage + a.Title,
			Flags:   flags(),
			Action:  agentAction(e, a, run),
		})
	}
	cmd.Action = needAgent
	return cmd
}

// hooksFlags are the flags of install and uninstall and of each agent under them.
func hooksFlags(install bool) []ucli.Flag {
	flags := settingsFlags(install)
	if install {
		flags = append(flags, &ucli.BoolFlag{Name: "no-context",
			Usage: "leave out the hook that gives the agent agmem's context at a session's start (Claude Code, Codex, Gemini CLI)"})
	}
	return flags
}

// settingsFlags are the flags of every command that edits an agent's settings; one that
// installs agmem there also takes the memory repo.
func settingsFlags(install bool) []ucli.Flag {
	flags := []ucli.Flag{
		&ucli.StringFlag{Name: "scope", Value: string(hooks.User), Usage: "user: the agent's settings in your home directory; project: the current directory's"},
		&ucli.BoolFlag{Name: "dry-run", Usage: "show what would change, as a diff, and write nothing"},
	}
	if install {
		flags = append(flags, repoFlag())
	}
	return flags
}

func needAgent(c *ucli.Context) error {
	advice := fmt.Sprintf(`run "%s AGENT", AGENT one of %s`, commandPath(c), strings.Join(hooks.Names(), ", "))
	if c.Args().Present() {
		return hint.With(fmt.Errorf("no agent %q", c.Args().First()), advice)
	}
	return hint.With(fmt.Errorf("%s needs an agent", strings.TrimPrefix(commandPath(c), "agmem ")), advice)
}

// agentRun is what an install or uninstall (of hooks, of the MCP server) does for one agent.
type agentRun struct {
	e      *env
	agent  hooks.Agent
	scope  hooks.Scope
	dryRun bool
	place  hooks.Place
	self   string // this agmem binary
}

func agentAction(e *env, a hooks.Agent, run func(*ucli.Context, agentRun) error) ucli.ActionFunc {
	return func(c *ucli.Context) error {
		if err := noArgs(c); err != nil {
			return err
		}
		r := agentRun{e: e, agent: a, scope: hooks.Scope(lineageString(c, "scope")), dryRun: lineageBool(c, "dry-run")}
		if r.scope != hooks.User && r.scope != hooks.Project {
			return hint.With(fmt.Errorf("no scope %q", r.scope), "--scope user (the default) or --scope project")
		}
		var err error
		if r.place, err = hooksPlace(e); err != nil {
			return err
		}
		if r.self, err = agmemBinary(); err != nil {
			return err
		}
		return run(c, r)
	}
}

// lineageString is a flag's value from the nearest command that was given it.
func lineageString(c *ucli.Context, name string) string {
	for _, ctx := range c.Lineage() {
		if ctx.IsSet(name) {
			return ctx.String(name)
		}
	}
	return c.String(name)
}

func lineageBool(c *ucli.Context, name string) bool {
	for _, ctx := range c.Lineage() {
		if ctx.IsSet(name) {
			return ctx.Bool(name)
		}
	}
	return false
}

func hooksPlace(e *env) (hooks.Place, error) {
	wd, err := os.Getwd()
	if err != nil {
		return hooks.Place{}, err
	}
	home := e.getenv("HOME")
	if home == "" {
		return hooks.Place{}, hint.With(errors.New("HOME is not set: agmem cannot find the agents' user settings"), "set HOME, or use --scope project")
	}
	return hooks.Place{Home: home, Project: wd, Getenv: e.getenv}, nil
}

// agmemBinary is the absolute path of this agmem, which hooks and services will run. It
// is the "agmem" on $PATH when that leads to this file by symbolic links, as a package
// manager's does (Homebrew's /opt/homebrew/bin/agmem, a nix profile's bin/agmem): the
// link stays through upgrades, while the file it leads to (…/Cellar/agmem/1.2.0/bin/agmem)
// goes with its version, and hooks naming it would fail from then on. Otherwise it is the
// file itself.
func agmemBinary() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot tell where this agmem is: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return "", hint.With(fmt.Errorf("this agmem is a temporary build (%s) that could not be run later", exe),
			`install it first ("`+installCommand+`", as the README says), then run this command again with the installed agmem`)
	}
	if onPath, err := exec.LookPath("agmem"); err == nil {
		if abs, err := filepath.Abs(onPath); err == nil {
			if target, err := filepath.EvalSymlinks(abs); err == nil && target == exe {
				return abs, nil
			}
		}
	}
	return exe, nil
}

// installCommand installs agmem and agmem-record together, as the README says.
const installCommand = "CGO_ENABLED=0 go install -tags urfave_cli_no_docs . ./cmd/agmem-record"

// recordBinary is what hooks run to record, and to give context: agmem-record beside this agmem when it is
// there, as installCommand puts it (it starts faster, linking no git code),
// and of the same build; else this agmem. An agmem-record left from an earlier version,
// when agmem alone was upgraded, could not record into a journal a newer agmem wrote.
func recordBinary(self string) string {
	path := filepath.Join(filepath.Dir(self), hooks.RecordBinary)
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 && sameBuild(self, path) {
		return path
	}
	return self
}

// sameBuild says whether the binaries a and b are of one build of agmem: the same file,
// or of the same version or VCS revision, by the same Go for the same platform. A build
// that names neither (a development build without VCS stamping, or from a tarball) is
// not known to be the same as another: hooks then run agmem record, slower but never
// older than agmem.
func sameBuild(a, b string) bool {
	if fa, err := os.Stat(a); err == nil {
		if fb, err := os.Stat(b); err == nil && os.SameFile(fa, fb) {
			return true
		}
	}
	ia, err := buildinfo.ReadFile(a)
	if err != nil {
		return false
	}
	ib, err := buildinfo.ReadFile(b)
	if err != nil {
		return false
	}
	id := func(bi *buildinfo.BuildInfo) (version, settings string) {
		version = bi.Main.Version
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision", "vcs.modified", "GOOS", "GOARCH":
				settings += s.Key + "=" + s.Value + " "
			}
		}
		return version, settings
	}
	va, sa := id(ia)
	vb, sb := id(ib)
	known := va != "(devel)" && va != "" || strings.Contains(sa, "vcs.revision=")
	return known && ia.GoVersion == ib.GoVersion && va == vb && sa == sb
}

func runHooksInstall(c *ucli.Context, r agentRun) error {
	repo, err := openRepo(c, r.e)
	if errors.Is(err, memrepo.ErrNotFound) {
		return hint.With(fmt.Errorf("agmem's hooks need a memory repo to record into: %w", err),
			`run "agmem init ~/agent-memory", then "agmem hooks install `+r.agent.Name+` --repo ~/agent-memory"`)
	}
	if err != nil {
		return err
	}
	rec := hooks.Recorder{Binary: recordBinary(r.self), Repo: repo.Root, Agent: r.agent.Name}
	if !lineageBool(c, "no-context") {
		rec.Context = rec.Binary
	}
	plan, err := r.agent.PlanInstall(r.place, r.scope, rec, r.self)
	if err != nil {
		return r.unreadable(err)
	}
	if err := r.apply(plan); err != nil {
		return err
	}
	if !r.dryRun {
		fmt.Fprintf(r.e.stdout, "%s: the hooks run %s\n", r.agent.Name, rec.Command())
		if rec.Context != "" && slices.ContainsFunc(r.agent.Events, func(ev hooks.Event) bool { return ev.Context }) {
			fmt.Fprintf(r.e.stdout, "%s: at a session's start, %s gives the agent what agmem remembers of its project (--no-context leaves it out)\n",
				r.agent.Name, rec.ContextCommand())
		}
	}
	return nil
}

func runHooksUninstall(_ *ucli.Context, r agentRun) error {
	plan, err := r.agent.PlanUninstall(r.place, r.scope, r.self)
	if err != nil {
		return r.unreadable(err)
	}
	return r.apply(plan)
}

func (r agentRun) unreadable(err error) error {
	if errors.Is(err, hooks.ErrUnreadable) {
		return hint.With(err, "agmem left the file as it was: fix it (or move it aside) and run this again")
	}
	return err
}

// apply writes the plan's edits, or with --dry-run shows them, one line per file.
func (r agentRun) apply(plan hooks.Plan) error {
	out := r.e.stdout
	for _, ed := range plan.Edits {
		switch {
		case ed.Old == nil && !ed.Changes():
			fmt.Fprintf(out, "%s: %s: no such file; nothing to change\n", r.agent.Name, ed.Path)
		case !ed.Changes():
			fmt.Fprintf(out, "%s: %s: nothing to change\n", r.agent.Name, ed.Path)
		case r.dryRun:
			fmt.Fprintf(out, "%s: %s: not written (dry run): %s\n", r.agent.Name, ed.Path, ed.What)
			old, now, text := ed.Path, ed.Path, ed.New
			if ed.Old == nil {
				old = "/dev/null"
			}
			if ed.Remove {
				now, text = "/dev/null", nil
			}
			out.Write(diff.Diff(old, ed.Old, now, text))
		default:
			backup, err := ed.Write()
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "%s: %s: %s\n", r.agent.Name, ed.Path, ed.What)
			if backup != "" {
				fmt.Fprintf(out, "%s: %s: the file as it was is kept in %s\n", r.agent.Name, ed.Path, backup)
			}
		}
	}
	for _, w := range plan.Warnings {
		fmt.Fprintf(r.e.stderr, "agmem: warning: %s\n", hint.OneLine(w))
	}
	if r.dryRun {
		fmt.Fprintln(out, "dry run: nothing was written")
	}
	return nil
}

func runHooksStatus(e *env, asJSON bool) error {
	place, err := hooksPlace(e)
	if err != nil {
		return err
	}
	self, _ := os.Executable() // only to recognise a renamed agmem; its name does as well
	var all []hooks.Status
	for _, a := range hooks.Agents {
		for _, s := range []hooks.Scope{hooks.User, hooks.Project} {
			all = append(all, a.Status(place, s, self))
		}
	}
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(all)
	}
	for _, st := range all {
		fmt.Fprintf(e.stdout, "%s (%s): %s: %s\n", st.Agent, st.Scope, st.Path, hooksSummary(st))
		if len(st.Events) > 0 {
			fmt.Fprintf(e.stdout, "  events: %s\n", strings.Join(st.Events, ", "))
			if len(st.Missing) > 0 {
				fmt.Fprintf(e.stdout, "  missing: %s (run \"agmem hooks install %s --scope %s\")\n", strings.Join(st.Missing, ", "), st.Agent, st.Scope)
			}
			for _, rec := range st.Recorders {
				fmt.Fprintf(e.stdout, "  records into %s with %s", orDiscovered(rec.Repo), rec.Binary)
				reinstall := fmt.Sprintf("agmem hooks install %s --scope %s", st.Agent, st.Scope)
				if rec.Repo != "" {
					reinstall += " --repo " + shell.Quote(rec.Repo)
				}
				switch {
				case slices.Contains(st.MissingBinaries, rec.Binary):
					fmt.Fprintf(e.stdout, ": no such file, so these hooks fail (run %q to have them run this agmem)", reinstall)
				case hooks.Standalone(rec.Binary) && filepath.IsAbs(rec.Binary) && self != "" && !sameBuild(self, rec.Binary):
					fmt.Fprintf(e.stdout, ": not known to be of this agmem's build, and maybe older than its journal (install both with %q, or run %q to have them run this agmem)", installCommand, reinstall)
				case rec.Repo != "":
					// As the hook reads it, its agent's environment unknown here: the file.
					if _, err := config.Load(filepath.Join(rec.Repo, memrepo.StateDirName), func(string) string { return "" }); err != nil {
						fmt.Fprintf(e.stdout, ": its configuration does not load, so every record fails: %s", hint.OneLine(err.Error()))
					}
				}
				fmt.Fprintln(e.stdout)
			}
		}
		if sw := st.Switch; sw != nil && (st.Exists || sw.State != hooks.SwitchUnset) {
			fmt.Fprintf(e.stdout, "  %s in %s: %s\n", sw.Setting, sw.Path, sw.State)
		}
		if tr := st.Trust; tr != nil {
			printTrust(e.stdout, st, tr)
		}
	}
	return nil
}

// printTrust says which of agmem's hooks an agent that runs only the hooks a person
// trusted (Codex) will run, and how to trust the others.
func printTrust(w io.Writer, st hooks.Status, tr *hooks.Trust) {
	title := st.Title
	run := fmt.Sprintf("%q", st.Agent)
	if st.Scope == hooks.Project {
		run += " in " + filepath.Dir(filepath.Dir(st.Path))
	}
	how := "run " + run + `, and at "Hooks need review" choose "Trust all and continue" (or trust each with /hooks); a script can pass --dangerously-bypass-hook-trust`
	switch {
	case tr.Error != "":
		fmt.Fprintf(w, "  trusted by %s: cannot tell: %s\n", title, hint.OneLine(tr.Error))
		return
	case tr.Runs():
		fmt.Fprintf(w, "  trusted by %s (%s)\n", title, tr.Config)
		return
	}
	if tr.Project != "" {
		fmt.Fprintf(w, "  %s runs no hook of %s until you trust the project: run %q there and trust it\n", title, tr.Project, st.Agent)
	}
	if len(tr.Untrusted) > 0 {
		fmt.Fprintf(w, "  not trusted by %s, which runs no hook until a person trusts it: %s; to trust them, %s\n", title, strings.Join(tr.Untrusted, ", "), how)
	}
	if len(tr.Changed) > 0 {
		fmt.Fprintf(w, "  changed since %s trusted them (a new path, timeout or command), so it runs them no more: %s; to trust them again, %s\n", title, strings.Join(tr.Changed, ", "), how)
	}
	if len(tr.Disabled) > 0 {
		fmt.Fprintf(w, "  switched off in %s: %s (remove their enabled = false to let them run)\n", tr.Config, strings.Join(tr.Disabled, ", "))
	}
}

func hooksSummary(st hooks.Status) string {
	switch {
	case st.Error != "":
		return hint.OneLine(st.Error)
	case !st.Exists:
		return "no file"
	case len(st.Events) == 0:
		return "no agmem hooks"
	}
	summary := "installed"
	if len(st.Missing) > 0 {
		summary = "partly installed"
	}
	if len(st.MissingBinaries) > 0 {
		summary += ", but an agmem they run is gone"
	}
	if st.Trust != nil && !st.Trust.Runs() {
		summary += ", but " + st.Title + " runs only the hooks a person trusted, and not all of these"
	}
	return summary
}

func orDiscovered(repo string) string {
	if repo == "" {
		return "the memory repo found from where the agent runs ($AGMEM_REPO, or .agmem/ above)"
	}
	return repo
}
