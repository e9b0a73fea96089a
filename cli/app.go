// Package cli is agmem's command line: flags in, calls into the other packages, output
// out. Each command is a small constructor (newXCommand) and a runX function that does
// the work against an env, so tests can call either. Nothing imports this package but
// main.
package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"

	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/memrepo"
)

// env is what a command reads and writes besides its flags.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	notFound       error // an unknown command: urfave/cli's hook for it cannot return an error
}

// Hinted is an error with advice for the person who hit it.
type Hinted struct {
	Err  error
	Hint string
}

func (h *Hinted) Error() string { return h.Err.Error() }
func (h *Hinted) Unwrap() error { return h.Err }

func withHint(err error, hint string) error { return &Hinted{Err: err, Hint: hint} }

// Main runs agmem with args and returns the process exit code: 0, or 1 for any error.
// It never returns 2 (agent hook runners read 2 as "block") and never lets a panic out.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "agmem: internal error: %v\n", p)
			fmt.Fprintln(stderr, "agmem: hint: nothing recorded was lost; please report this")
			code = 1
		}
	}()
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}
	if err := newApp(e).Run(args); err != nil {
		report(stderr, err)
		return 1
	}
	return 0
}

func report(w io.Writer, err error) {
	fmt.Fprintf(w, "agmem: %s\n", oneLine(err.Error()))
	if hint := hintFor(err); hint != "" {
		fmt.Fprintf(w, "agmem: hint: %s\n", hint)
	}
}

// oneLine makes text safe for one terminal line: control characters (escape sequences
// included) become spaces, and runs of space collapse.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)), " ")
}

func newApp(e *env) *ucli.App {
	app := &ucli.App{
		Name:  "agmem",
		Usage: "a flight recorder for AI agents, in git",
		Description: "agmem records every tool call an agent makes into a journal, and commits them\n" +
			"to a git repository as markdown with the session's metadata in trailers.",
		Version:         Version,
		Reader:          e.stdin,
		Writer:          e.stdout,
		ErrWriter:       e.stderr,
		HideHelpCommand: false,
		Flags:           []ucli.Flag{repoFlag()},
		Commands: []*ucli.Command{
			newInitCommand(e),
			newRecordCommand(e),
			newImportCommand(e),
			newFlushCommand(e),
			newStatusCommand(e),
			newSessionsCommand(e),
			newReplayCommand(e),
			newConfigCommand(e),
			newDaemonCommand(e),
			newPushCommand(e),
			newPullCommand(e),
			newGCCommand(e),
			newVerifyCommand(e),
			newHooksCommand(e),
			newMCPCommand(e),
			newRedactCommand(e),
			newDemoCommand(e),
			newVersionCommand(e),
			newCompletionCommand(e),
		},
		EnableBashCompletion:      true,
		DisableSliceFlagSeparator: true,                          // --arg k=a,b is one value
		ExitErrHandler:            func(*ucli.Context, error) {}, // Main decides the exit code
	}
	app.CommandNotFound = func(c *ucli.Context, name string) {
		e.notFound = withHint(fmt.Errorf("unknown command %q", name), `run "agmem help" for the list`)
	}
	usage := func(c *ucli.Context, err error, _ bool) error {
		return withHint(err, fmt.Sprintf("run \"agmem %s --help\"", strings.TrimSpace(strings.TrimPrefix(c.Command.FullName(), "agmem"))))
	}
	app.OnUsageError = usage
	for _, c := range app.Commands {
		c.OnUsageError = usage
		if c.Action != nil && c.Name != "init" && c.Name != "demo" && c.Name != "version" && c.Name != "completion" {
			c.Flags = append(c.Flags, repoFlag()) // so that it also works after the command's name
		}
	}
	app.After = func(*ucli.Context) error { return e.notFound }
	return app
}

// repoFlagValue is --repo as given before or after the command's name.
func repoFlagValue(c *ucli.Context) string {
	for _, ctx := range c.Lineage() {
		if ctx.IsSet("repo") {
			return ctx.String("repo")
		}
	}
	return ""
}

func repoFlag() ucli.Flag {
	return &ucli.StringFlag{Name: "repo", Usage: "the memory repo (default: $AGMEM_REPO, else the nearest .agmem/ at or above here)"}
}

// openRepo finds the memory repo per SPEC §3: --repo, then AGMEM_REPO, then the
// nearest directory at or above the current one that holds .agmem/.
func openRepo(c *ucli.Context, e *env) (memrepo.Repo, error) {
	hint := `run "agmem init" there, or set AGMEM_REPO`
	if dir := repoFlagValue(c); dir != "" {
		r, err := memrepo.At(dir)
		if err != nil {
			return r, withHint(err, `run "agmem init `+dir+`"`)
		}
		return r, nil
	}
	if dir := e.getenv("AGMEM_REPO"); dir != "" {
		r, err := memrepo.At(dir)
		if err != nil {
			return r, withHint(fmt.Errorf("AGMEM_REPO: %w", err), `run "agmem init `+dir+`"`)
		}
		return r, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return memrepo.Repo{}, err
	}
	r, err := memrepo.Find(wd)
	if err != nil {
		return r, withHint(err, hint)
	}
	return r, nil
}

// onRepo is the action of a command that takes no arguments and works on the memory
// repo found per SPEC §3.
func onRepo(e *env, run func(*ucli.Context, memrepo.Repo) error) ucli.ActionFunc {
	return func(c *ucli.Context) error {
		if err := noArgs(c); err != nil {
			return err
		}
		repo, err := openRepo(c, e)
		if err != nil {
			return err
		}
		return run(c, repo)
	}
}

// noArgs refuses positional arguments a command does not take.
func noArgs(c *ucli.Context) error {
	if c.Args().Present() {
		return withHint(fmt.Errorf("%s takes no arguments, got %q", c.Command.Name, c.Args().First()),
			fmt.Sprintf(`run "agmem %s --help"`, c.Command.Name))
	}
	return nil
}
