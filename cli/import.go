package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/record"
)

func newImportCommand(e *env) *ucli.Command {
	return &ucli.Command{
		Name:      "import",
		Usage:     "bring in history kept elsewhere: the Python agmem's .mem/, native JSONL, Claude Code transcripts",
		ArgsUsage: "FILE…",
		Description: "Each file is recognised by its content: the Python agmem's daemon_session.json and\n" +
			"daemon_buffer.jsonl, JSONL of anything \"agmem record\" accepts, or a Claude Code\n" +
			"transcript (~/.claude/projects/<project>/<session>.jsonl), whose tool calls are paired\n" +
			"with their results. Importing a file twice adds nothing.",
		Action: func(c *ucli.Context) error {
			if c.NArg() == 0 {
				return hint.With(errors.New("import needs at least one file"), `run "agmem import --help"`)
			}
			repo, err := openRepo(c, e)
			if err != nil {
				return err
			}
			return runImport(e, repo, c.Args().Slice())
		},
	}
}

func runImport(e *env, repo memrepo.Repo, paths []string) error {
	rec, err := record.Open(repo.Root, record.Options{Getenv: e.getenv})
	if err != nil {
		return err
	}
	if why := rec.Off(); why != "" {
		fmt.Fprintf(e.stderr, "agmem: nothing imported: %s\n", why)
		return nil
	}
	bar := newProgressBar(e.stderr)
	// Each chunk is one transaction: a live record waits for a chunk, never a file.
	files, err := rec.Import(paths, bar.show)
	bar.done()
	updateIndex(e, repo, nil)
	var total, dups, notUnderstood, notCaptured int
	for _, f := range files {
		imported, duplicates := 0, 0
		for _, r := range f.Recorded {
			if r.Duplicate {
				duplicates++
			} else {
				imported++
			}
		}
		fmt.Fprintf(e.stdout, "%s (%s): %d imported, %d duplicates, %d not understood, %d not captured\n",
			f.Path, f.Format, imported, duplicates, f.NotUnderstood, len(f.NotCaptured))
		total, dups = total+imported, dups+duplicates
		notUnderstood, notCaptured = notUnderstood+f.NotUnderstood, notCaptured+len(f.NotCaptured)
	}
	switch {
	case err != nil && len(files) == 0:
		return hint.Else(err, "give files agmem can read: JSONL, a Python agmem session, a Claude Code transcript")
	case err != nil:
		return hint.With(err, "what was imported stays; importing again adds only the rest")
	}
	if len(files) > 1 {
		fmt.Fprintf(e.stdout, "total: %d imported, %d duplicates, %d not understood, %d not captured\n",
			total, dups, notUnderstood, notCaptured)
	}
	if total+dups+notCaptured == 0 && notUnderstood > 0 {
		return hint.With(errors.New("nothing imported: nothing in what was given was understood"),
			"give files agmem can read: JSONL, a Python agmem session, a Claude Code transcript")
	}
	return nil
}

// progressBar draws how far an import has read, on a terminal only.
type progressBar struct {
	out   *os.File // nil: not a terminal, draw nothing
	shown time.Time
	drawn bool
}

func newProgressBar(w any) *progressBar {
	f, ok := w.(*os.File)
	if !ok {
		return &progressBar{}
	}
	if st, err := f.Stat(); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return &progressBar{}
	}
	return &progressBar{out: f}
}

func (b *progressBar) show(path string, done, total int64) {
	if b.out == nil || total < 1<<20 || time.Since(b.shown) < 100*time.Millisecond {
		return
	}
	b.shown, b.drawn = time.Now(), true
	const width = 30
	filled := int(done * width / total)
	fmt.Fprintf(b.out, "\r%s [%-*s] %3d%%", hint.OneLine(path), width, strings.Repeat("=", filled), done*100/total)
}

func (b *progressBar) done() {
	if b.drawn {
		fmt.Fprint(b.out, "\r\033[K")
	}
}
