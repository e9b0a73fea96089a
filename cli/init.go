package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/shell"
	"github.com/agmem/agmem/maintain"
)

func newInitCommand(e *env) *ucli.Command {
	return &ucli.Command{
		Name:      "init",
		Usage:     "make a directory a memory repo (idempotent; works in an existing git repo)",
		ArgsUsage: "[DIR]",
		Action: func(c *ucli.Context) error {
			if c.Args().Len() > 1 {
				return hint.With(fmt.Errorf("init takes one directory, got %d arguments", c.Args().Len()), `run "agmem init [DIR]"`)
			}
			dir := c.Args().First()
			if dir == "" {
				dir = "."
			}
			return runInit(e, dir)
		},
	}
}

func runInit(e *env, dir string) error {
	r, did, err := maintain.Init(dir)
	if errors.Is(err, maintain.ErrGitignoreChanged) {
		return hint.With(fmt.Errorf("init %s: %w", dir, err),
			"commit or stash your .gitignore changes, or add .agmem/ to .gitignore yourself, then run agmem init again")
	}
	if errors.Is(err, syscall.ENOTDIR) {
		return hint.With(fmt.Errorf("init %s: %w", dir, err), "give a directory, or a path where one can be made")
	}
	if err != nil {
		return fmt.Errorf("init %s: %w", dir, err)
	}
	for _, line := range did {
		fmt.Fprintln(e.stdout, line)
	}
	if len(did) == 0 {
		fmt.Fprintf(e.stdout, "memory repo at %s is already set up\n", r.Root)
	} else {
		fmt.Fprintf(e.stdout, "memory repo ready at %s\n", r.Root)
	}
	if _, err := os.Stat(filepath.Join(r.GitDir(), "shallow")); err == nil {
		warn(e, hint.With(errors.New("this clone is shallow: audit, sessions and the replay of older sessions read whole histories, and fail on it"),
			"git -C "+shell.Readable(r.Root)+" fetch --unshallow"))
	}
	return nil
}
