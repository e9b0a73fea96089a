package cli

import (
	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/record"
)

func newRecordCommand(e *env) *ucli.Command {
	var f record.Flags
	var flags []ucli.Flag
	var repeated []record.Flag
	for _, fl := range f.Flags() {
		var aliases []string
		if fl.Alias != "" {
			aliases = []string{fl.Alias}
		}
		switch {
		case fl.Bool != nil:
			flags = append(flags, &ucli.BoolFlag{Name: fl.Name, Aliases: aliases, Usage: fl.Usage, Destination: fl.Bool})
		case fl.String != nil:
			flags = append(flags, &ucli.StringFlag{Name: fl.Name, Aliases: aliases, Usage: fl.Usage, Destination: fl.String})
		default:
			flags = append(flags, &ucli.StringSliceFlag{Name: fl.Name, Aliases: aliases, Usage: fl.Usage})
			repeated = append(repeated, fl)
		}
	}
	return &ucli.Command{
		Name:        "record",
		Usage:       record.Usage,
		Description: record.Description,
		Flags:       flags,
		Action: func(c *ucli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			for _, fl := range repeated {
				*fl.Strings = c.StringSlice(fl.Name)
			}
			return record.Run(e.recordEnv(), repoFlagValue(c), f)
		},
	}
}
