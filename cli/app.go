// Package cli is agmem's command line: flags in, calls into the other packages, output
// out. Each command is a small constructor (newXCommand) and a runX function that does
// the work against an env, so tests can call either. Nothing imports this package but
// main.
package cli

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unicode"

	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/record"
)

// env is what a command reads and writes besides its flags.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	notFound       error // an unknown command: urfave/cli's hook for it cannot return an error
}

func (e *env) recordEnv() record.Env {
	return record.Env{Stdin: e.stdin, Stdout: e.stdout, Stderr: e.stderr, Getenv: e.getenv}
}

// Main runs agmem with args and returns the process exit code: 0, or 1 for any error.
// It never returns 2 (agent hook runners read 2 as "block") and never lets a panic out.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer hint.Recover(stderr, &code)
	out := &outputWriter{w: stdout}
	e := &env{stdin: stdin, stdout: out, stderr: stderr, getenv: os.Getenv}
	app := newApp(e)
	args, err := flagsFirst(app, args)
	if err == nil {
		err = app.Run(args)
	}
	if err == nil && out.err != nil {
		err = hint.With(fmt.Errorf("the output was not all written: %v", out.err), "the command ran: only what it printed was lost (a full disk, a closed pipe)")
	}
	if err != nil {
		report(stderr, err)
		return 1
	}
	return 0
}

func report(w io.Writer, err error) { hint.Print(w, err, hint.For(err)) }

// outputWriter is the standard output, which keeps the first error a write met: a
// command that printed into a full disk (search > /dev/full) exits 1, not 0, whichever
// of its writes failed.
type outputWriter struct {
	w   io.Writer
	err error
}

func (o *outputWriter) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	if err != nil && o.err == nil {
		o.err = err
	}
	return n, err
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
			newSearchCommand(e),
			newShowCommand(e),
			newTimelineCommand(e),
			newContextCommand(e),
			newIndexCommand(e),
			newConfigCommand(e),
			newDaemonCommand(e),
			newPushCommand(e),
			newPullCommand(e),
			newGCCommand(e),
			newVerifyCommand(e),
			newAuditCommand(e),
			newUICommand(e),
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
		e.notFound = hint.With(fmt.Errorf("unknown command %q", name), `run "agmem help" for the list`)
	}
	app.OnUsageError = usageError
	for _, c := range app.Commands {
		if c.Action != nil && c.Name != "init" && c.Name != "demo" && c.Name != "version" && c.Name != "completion" {
			c.Flags = append(c.Flags, repoFlag()) // so that it also works after the command's name
		}
	}
	onUsageErrors(app.Commands)
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
	return &ucli.StringFlag{Name: "repo", Usage: memrepo.RepoFlagUsage}
}

// openRepo finds the memory repo (FORMAT.md §Locating, memrepo.Locate).
func openRepo(c *ucli.Context, e *env) (memrepo.Repo, error) {
	return memrepo.Locate(repoFlagValue(c), e.getenv)
}

// onRepo is the action of a command that takes no arguments and works on the memory
// repo found as FORMAT.md §Locating says.
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
		return hint.With(fmt.Errorf("%s takes no arguments, got %q", commandPath(c), c.Args().First()), helpHint(c))
	}
	return nil
}

// helpHint is the hint of a command's usage error: its help.
func helpHint(c *ucli.Context) string { return fmt.Sprintf(`run "%s --help"`, commandPath(c)) }

// usageError is a bad flag's error, one line and a hint on stderr, as every other error
// is: urfave/cli's own prints the command's help on stdout, which is the protocol's
// channel of agmem mcp serve and the hooks' answer to their agent.
func usageError(c *ucli.Context, err error, _ bool) error {
	return hint.With(err, helpHint(c))
}

// onUsageErrors gives every command under cmds, at any depth, usageError.
func onUsageErrors(cmds []*ucli.Command) {
	for _, c := range cmds {
		c.OnUsageError = usageError
		onUsageErrors(c.Subcommands)
	}
}

// commandPath is how the command being run was called: "agmem hooks install claude".
func commandPath(c *ucli.Context) string {
	var names []string
	for _, ctx := range c.Lineage() {
		if ctx.Command != nil {
			names = append([]string{ctx.Command.Name}, names...)
		}
	}
	return strings.Join(names, " ")
}

// flagsAnywhere are the commands whose flags may also come after their arguments, as
// people type them: agmem search discount --tool Bash. (urfave/cli stops reading flags
// at a command's first argument.)
var flagsAnywhere = map[string]bool{"search": true, "show": true, "timeline": true}

// looksLikeFlag says whether an argument is a flag's name, known or not: a dash or two
// and a letter. An unknown one is refused as a flag (--sinse 7d), not searched for as
// words; "-1" is a word, and "--" lets a word start with a dash.
func looksLikeFlag(a string) bool {
	name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
	return len(name) < len(a) && name != "" && unicode.IsLetter(rune(name[0]))
}

// flagsFirst moves the flags of such a command before its arguments, each with its
// value; what follows "--" stays as it is. A flag that takes a value and ends the line
// is an error: moved first, it would take the query for its value.
func flagsFirst(app *ucli.App, args []string) ([]string, error) {
	at := -1
	var cmd *ucli.Command
	for i := 1; i < len(args) && at < 0; i++ {
		if c := app.Command(args[i]); c != nil && !strings.HasPrefix(args[i], "-") {
			at, cmd = i, c
		}
	}
	if cmd == nil || !flagsAnywhere[cmd.Name] {
		return args, nil
	}
	takesValue := map[string]bool{}
	for _, f := range cmd.Flags {
		v, ok := f.(interface{ TakesValue() bool })
		for _, name := range f.Names() {
			takesValue[name] = ok && v.TakesValue()
		}
	}
	flags, rest := []string{}, []string{}
	for i := at + 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		name, hasValue := strings.TrimLeft(a, "-"), strings.Contains(a, "=")
		name, _, _ = strings.Cut(name, "=")
		known, isFlag := takesValue[name]
		if !strings.HasPrefix(a, "-") || !isFlag && !looksLikeFlag(a) {
			rest = append(rest, a)
			continue
		}
		flags = append(flags, a)
		switch {
		case !known || hasValue:
		case i+1 < len(args):
			i++
			flags = append(flags, args[i])
		default:
			return nil, hint.With(fmt.Errorf("flag needs an argument: %s", a), fmt.Sprintf("give it one: %s %s VALUE", cmd.Name, a))
		}
	}
	return slices.Concat(args[:at+1], flags, rest), nil
}
