package cli

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"os/exec"

	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/record"
)

// demoSession is a short Claude Code session, one hook payload per line.
//
//go:embed demo/claude-code-session.jsonl
var demoSession []byte

func newDemoCommand(e *env) *ucli.Command {
	var dir string
	return &ucli.Command{
		Name:  "demo",
		Usage: "record a sample Claude Code session into a new memory repo, flush it, show git log",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "dir", Usage: "where to make the demo repo (default: a new temporary directory)", Destination: &dir},
		},
		Action: func(c *ucli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			return runDemo(e, dir)
		},
	}
}

func runDemo(e *env, dir string) error {
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "agmem-demo-"); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.stdout, "$ agmem init %s\n", dir)
	if err := runInit(e, dir); err != nil {
		return err
	}
	repo, err := memrepo.At(dir)
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, "\n$ agmem record < hook payload   # once per hook call, as Claude Code would")
	sc := bufio.NewScanner(bytes.NewReader(demoSession))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		hook := e.recordEnv()
		hook.Stdin = bytes.NewReader(sc.Bytes())
		if err := record.Run(hook, repo.Root, record.Flags{}); err != nil {
			return err
		}
	}
	fmt.Fprintln(e.stdout, "\n$ agmem flush")
	// The demo asks no model: it runs offline and spends nobody's API credits unasked.
	if err := runFlush(e, repo, flushOptions{noLLM: true}); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "\n$ git log --format='%s'\n", gitLogFormat)
	if err := gitLog(e, dir); err != nil {
		fmt.Fprintf(e.stdout, "(git is not installed here: %v)\n", err)
	}
	fmt.Fprintf(e.stdout, "\nThe memory repo is %s. Try:\n", repo.Root)
	fmt.Fprintf(e.stdout, "  agmem --repo %s sessions\n", repo.Root)
	fmt.Fprintf(e.stdout, "  agmem --repo %s replay --session 0b7e4d2c-8a31-4f6e-b5c9-1d2e3f4a5b6c\n", repo.Root)
	fmt.Fprintf(e.stdout, "  git -C %s log --format='%%(trailers:key=Agmem-Session,valueonly)'\n", repo.Root)
	fmt.Fprintf(e.stdout, "  agmem --repo %s audit\n", repo.Root)
	fmt.Fprintf(e.stdout, "  agmem --repo %s ui\n", repo.Root)
	return nil
}

const gitLogFormat = "%h %s%n%b"

func gitLog(e *env, dir string) error {
	cmd := exec.Command("git", "-C", dir, "log", "--format="+gitLogFormat)
	cmd.Stdout, cmd.Stderr = e.stdout, e.stderr
	return cmd.Run()
}
