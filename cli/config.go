package cli

import (
	"encoding/json"
	"fmt"

	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/internal/config"
	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/memrepo"
)

func newConfigCommand(e *env) *ucli.Command {
	var asJSON bool
	return &ucli.Command{
		Name:  "config",
		Usage: "show the effective configuration, each value with where it came from",
		Description: "Settings come from .agmem/config.toml in the memory repo, overridden by\n" +
			"AGMEM_<SECTION>_<KEY> environment variables, e.g.:\n\n" +
			"  [capture]\n  ignore_tools = [\"echo\", \"pwd\"]\n  min_result_chars = 50\n  session_idle = \"30m\"",
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "json", Usage: "one JSON document", Destination: &asJSON},
		},
		Action: onRepo(e, func(_ *ucli.Context, repo memrepo.Repo) error {
			cfg, err := config.Load(repo.StateDir(), e.getenv)
			if err != nil {
				return hint.With(err, "fix the key named, or remove it to use its default")
			}
			settings := cfg.Settings()
			if asJSON {
				out, _ := json.MarshalIndent(settings, "", "  ")
				fmt.Fprintf(e.stdout, "%s\n", out)
				return nil
			}
			for _, s := range settings {
				value, _ := json.Marshal(s.Value)
				fmt.Fprintf(e.stdout, "%-26s = %-40s # %s\n", s.Key, value, s.Origin)
			}
			return nil
		}),
	}
}

// loadConfig is the memory repo's configuration; an error says how to see where each
// value comes from.
func loadConfig(e *env, repo memrepo.Repo) (*config.Config, error) {
	cfg, err := config.Load(repo.StateDir(), e.getenv)
	if err != nil {
		return nil, hint.With(err, `"agmem config" shows every key and where its value comes from`)
	}
	return cfg, nil
}
