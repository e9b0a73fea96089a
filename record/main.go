package record

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/memrepo"
)

// Main runs agmem-record with args (without the program's name) and returns the exit
// code: 0, or 1 for any error, never 2, which agents read as "block". agmem-record is
// "agmem record" with the same flags, in a binary that links only what recording needs:
// the agmem binary, with git and the command line library in it, takes about a
// millisecond longer to start, on every tool call of every agent (BENCHMARKS.md).
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer hint.Recover(stderr, &code)
	if err := runMain(args, Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: os.Getenv}); err != nil {
		hint.Print(stderr, err, hint.For(err))
		return 1
	}
	return 0
}

func runMain(args []string, e Env) error {
	var f Flags
	var repo string
	fs := flag.NewFlagSet("agmem-record", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // a bad flag is reported as every agmem error is
	for _, fl := range f.Flags() {
		names := []string{fl.Name}
		if fl.Alias != "" {
			names = append(names, fl.Alias)
		}
		for _, name := range names {
			switch {
			case fl.Bool != nil:
				fs.BoolVar(fl.Bool, name, false, fl.Usage)
			case fl.String != nil:
				fs.StringVar(fl.String, name, "", fl.Usage)
			default:
				fs.Var((*repeated)(fl.Strings), name, fl.Usage)
			}
		}
	}
	fs.StringVar(&repo, "repo", "", memrepo.RepoFlagUsage)
	help := `run "agmem-record --help"`
	switch err := fs.Parse(args); {
	case errors.Is(err, flag.ErrHelp), err == nil && fs.NArg() == 1 && fs.Arg(0) == "help": // as agmem record help
		usage(e.Stdout, fs)
		return nil
	case err != nil:
		return hint.With(err, help)
	case fs.NArg() > 0 && fs.Arg(0) == "context":
		return hint.With(fmt.Errorf("agmem-record takes no arguments, got %q", fs.Arg(0)),
			`the context hook's command comes first: "agmem-record context --repo DIR …"`)
	case fs.NArg() > 0:
		return hint.With(fmt.Errorf("agmem-record takes no arguments, got %q", fs.Arg(0)), help)
	}
	return Run(e, repo, f)
}

func usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "agmem-record: %s\n\n%s\n\nIt is \"agmem record\" in a binary of its own, which agmem's hooks run.\n"+
		"\"agmem-record context\", with the flags of \"agmem context\", is the hook at a session's start.\n\nFlags:\n", Usage, Description)
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// repeated is a flag given once per value: --arg a=1 --arg b=2. A value's commas are
// its own (--arg k=a,b is one value).
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, " ") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }
