package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/internal/config"
	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/redact"
)

type redactOptions struct {
	check, rules, asJSON bool
}

func newRedactCommand(e *env) *ucli.Command {
	var o redactOptions
	return &ucli.Command{
		Name:      "redact",
		Usage:     "redact a file or stdin as record would, or show what it would redact and why",
		ArgsUsage: "[FILE|-]",
		Description: "Prints the text with each secret replaced by [REDACTED:<rule>]. With --check, lists\n" +
			"each secret instead: where it is, the rule that finds it, and a masked preview.\n" +
			"The memory repo's [redact] settings apply when there is one (see \"agmem config\").",
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "check", Usage: "list what would be redacted and why", Destination: &o.check},
			&ucli.BoolFlag{Name: "json", Usage: "with --check: one JSON object per secret", Destination: &o.asJSON},
			&ucli.BoolFlag{Name: "rules", Usage: "list the rules' ids", Destination: &o.rules},
		},
		Action: func(c *ucli.Context) error {
			if c.Args().Len() > 1 {
				return hint.With(errors.New("redact takes at most one file"), `run "agmem redact --help"`)
			}
			return runRedact(c, e, o, c.Args().First())
		},
	}
}

func runRedact(c *ucli.Context, e *env, o redactOptions, file string) error {
	r, err := configuredRedactor(c, e)
	if err != nil {
		return err
	}
	if o.rules {
		for _, id := range redact.RuleIDs() {
			fmt.Fprintln(e.stdout, id)
		}
		return nil
	}
	name, text, err := readText(e, file)
	if err != nil {
		return err
	}
	if !o.check {
		out, _ := r.Text(text)
		io.WriteString(e.stdout, out)
		return nil
	}
	found := r.Find(text)
	for _, f := range found {
		line, col := position(text, f.Start)
		secret := text[f.Start:f.End]
		if o.asJSON {
			out, _ := json.Marshal(map[string]any{"file": name, "line": line, "column": col,
				"rule": f.Rule, "also": f.Also, "bytes": len(secret), "preview": preview(secret)})
			fmt.Fprintf(e.stdout, "%s\n", out)
			continue
		}
		also := ""
		if len(f.Also) > 0 {
			also = " (also " + strings.Join(f.Also, ", ") + ")"
		}
		fmt.Fprintf(e.stdout, "%s:%d:%d: %s%s: %s, %d bytes\n", name, line, col, f.Rule, also, preview(secret), len(secret))
	}
	if !o.asJSON {
		fmt.Fprintf(e.stdout, "%d secret(s) would be redacted\n", len(found))
	}
	return nil
}

// configuredRedactor is the memory repo's redactor when there is a memory repo here,
// else the built-in one.
func configuredRedactor(c *ucli.Context, e *env) (*redact.Redactor, error) {
	repo, err := openRepo(c, e)
	if errors.Is(err, memrepo.ErrNotFound) {
		return redact.Default(), nil
	}
	if err != nil {
		return nil, err
	}
	cfg, err := config.Load(repo.StateDir(), e.getenv)
	if err != nil {
		return nil, hint.With(err, "fix the key named, or remove it to use its default")
	}
	p, err := cfg.Policy()
	if err != nil {
		return nil, hint.With(err, "fix the [redact] settings")
	}
	return p.Redactor, nil
}

func readText(e *env, file string) (name, text string, err error) {
	var data []byte
	if file == "" || file == "-" {
		name = "-"
		data, err = io.ReadAll(io.LimitReader(e.stdin, config.DefaultMaxInput))
	} else {
		name = file
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return "", "", hint.With(err, "give a readable file, or - for stdin")
	}
	return name, string(data), nil
}

// position is the 1-based line and column (in bytes) of offset in text.
func position(text string, offset int) (line, col int) {
	before := text[:offset]
	line = strings.Count(before, "\n") + 1
	return line, offset - strings.LastIndexByte(before, '\n')
}

// preview shows enough of a secret to recognise it and not enough to use it.
func preview(secret string) string {
	secret = hint.OneLine(secret)
	r := []rune(secret)
	if len(r) < 12 {
		return strings.Repeat("*", len(r))
	}
	return string(r[:4]) + "…" + string(r[len(r)-2:])
}
