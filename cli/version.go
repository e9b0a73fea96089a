package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	ucli "github.com/urfave/cli/v2"
)

// Version is set at build time with -ldflags "-X github.com/agmem/agmem/cli.Version=…".
var Version = "0.1.0-dev"

func newVersionCommand(e *env) *ucli.Command {
	return &ucli.Command{
		Name:  "version",
		Usage: "print version and build information",
		Action: func(c *ucli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "agmem %s (%s, %s/%s)\n", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			if bi, ok := debug.ReadBuildInfo(); ok {
				for _, s := range bi.Settings {
					if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
						fmt.Fprintf(e.stdout, "%s: %s\n", s.Key, s.Value)
					}
				}
			}
			return nil
		},
	}
}
