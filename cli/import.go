package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/capture/importer"
	"github.com/agmem/agmem/internal/config"
	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/memory"
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
	cfg, err := config.Load(repo.StateDir(), e.getenv)
	if err != nil {
		return hint.With(err, `"agmem config" shows every key and where its value comes from`)
	}
	policy, err := cfg.Policy()
	if err != nil {
		return hint.With(err, `"agmem config" shows every key and where its value comes from`)
	}
	now := time.Now()
	bar := newProgressBar(e.stderr)
	imported := map[*importer.File]int{}
	duplicates := map[*importer.File]int{}
	// Each chunk is one transaction: a live record waits for a chunk, never a file.
	files, err := importer.Import(paths, policy, now, bar.show, func(f *importer.File, entries []memory.Entry) error {
		appended, err := repo.Journal().Import(entries)
		if err != nil {
			return err
		}
		for _, a := range appended {
			if a.Duplicate {
				duplicates[f]++
			} else {
				imported[f]++
			}
		}
		return nil
	})
	bar.done()
	var total, dups, notUnderstood, notCaptured int
	for i := range files {
		f := &files[i]
		fmt.Fprintf(e.stdout, "%s (%s): %d imported, %d duplicates, %d not understood, %d not captured\n",
			f.Path, f.Format, imported[f], duplicates[f], f.NotUnderstood, f.NotCaptured)
		total, dups = total+imported[f], dups+duplicates[f]
		notUnderstood, notCaptured = notUnderstood+f.NotUnderstood, notCaptured+f.NotCaptured
	}
	switch {
	case err != nil && len(files) == 0:
		return hint.With(err, "give files agmem can read: JSONL, a Python agmem session, a Claude Code transcript")
	case err != nil:
		return hint.With(err, "what was imported stays; importing again adds only the rest")
	}
	if len(files) > 1 {
		fmt.Fprintf(e.stdout, "total: %d imported, %d duplicates, %d not understood, %d not captured\n",
			total, dups, notUnderstood, notCaptured)
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
