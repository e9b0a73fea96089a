package cli

import (
	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/recorder"
)

func newRecordCommand(e *env) *ucli.Command {
	var o recorder.Options
	var flags []ucli.Flag
	var repeated []recorder.Flag
	for _, f := range o.Flags() {
		var aliases []string
		if f.Alias != "" {
			aliases = []string{f.Alias}
		}
		switch {
		case f.Bool != nil:
			flags = append(flags, &ucli.BoolFlag{Name: f.Name, Aliases: aliases, Usage: f.Usage, Destination: f.Bool})
		case f.String != nil:
			flags = append(flags, &ucli.StringFlag{Name: f.Name, Aliases: aliases, Usage: f.Usage, Destination: f.String})
		default:
			flags = append(flags, &ucli.StringSliceFlag{Name: f.Name, Aliases: aliases, Usage: f.Usage})
			repeated = append(repeated, f)
		}
	}
	return &ucli.Command{
		Name:        "record",
		Usage:       recorder.Usage,
		Description: recorder.Description,
		Flags:       flags,
		Action: onRepo(e, func(c *ucli.Context, repo memrepo.Repo) error {
			for _, f := range repeated {
				*f.Strings = c.StringSlice(f.Name)
			}
			return recorder.Run(e.recorderEnv(), repo, o)
		}),
	}
}
