package sessionstart

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/agmem/agmem/internal/config"
	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/record"
)

// HooksMain is agmem-record's command line, args without the program's name:
// "context FLAGS" gives context (Main), anything else records (record.Main).
func HooksMain(args []string, stdin, stdout, stderr *os.File) int {
	if len(args) > 0 && args[0] == "context" {
		return Main(args[1:], stdin, stdout, stderr)
	}
	return record.Main(args, stdin, stdout, stderr)
}

// Main is "agmem-record context FLAGS", the context hook in the hooks' binary, with
// the flags of "agmem context", and returns the exit code: 0, or 1, never 2. It gives
// the block the kept file holds when that is still right. Else, and for anything it
// does not take as "agmem context" would, it runs "agmem context" beside it with the
// same flags and payload, which answers from the index, or says what is wrong.
// agmem's output goes to stdout and stderr, which are files for that.
func Main(args []string, stdin io.Reader, stdout, stderr *os.File) (code int) {
	defer hint.Recover(stderr, &code)
	payload := ReadPayload(stdin)
	agmem, err := besideThis("agmem")
	if err == nil && givenKept(agmem, args, payload, stdout, stderr) {
		return 0
	}
	if err == nil {
		code, err = runAgmem(agmem, args, payload, stdout, stderr)
	}
	if err != nil {
		hint.Print(stderr, err, hint.For(err))
		return 1
	}
	return code
}

// givenKept gives what args and payload ask for from the kept file, and says whether it
// did. Whatever goes wrong, agmem context is left to answer: a panic too.
func givenKept(agmem string, args []string, payload []byte, stdout, stderr io.Writer) (given bool) {
	defer func() {
		if recover() != nil {
			given = false
		}
	}()
	var f Flags
	var repoFlag string
	fs := flag.NewFlagSet("context", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&repoFlag, "repo", "", "")
	fs.StringVar(&f.Project, "project", "", "")
	fs.StringVar(&f.Format, "format", "text", "")
	fs.StringVar(&f.Agent, "agent", "", "")
	if fs.Parse(args) != nil || fs.NArg() > 0 {
		return false
	}
	repo, err := memrepo.Locate(repoFlag, os.Getenv)
	if err != nil {
		return false
	}
	cfg, err := config.Load(repo.StateDir(), os.Getenv)
	if err != nil {
		return false
	}
	r, err := Ask(repo, cfg, os.Getenv, f, payload)
	// The journal held, agmem context waits for it what a session's start may: here
	// only a moment's hold is waited out.
	r.Repo.LockUntil = time.Now()
	return err == nil && r.GiveKept(agmem, stdout, stderr)
}

// runAgmem runs "agmem context" with args and payload on its stdin, and returns its exit
// code: 0, or 1 when it said why. It starts the process itself: os/exec would be one
// more package for every recording hook to load.
func runAgmem(agmem string, args []string, payload []byte, stdout, stderr *os.File) (int, error) {
	in, feed, err := os.Pipe()
	if err != nil {
		return 1, err
	}
	p, err := os.StartProcess(agmem, append([]string{agmem, "context"}, args...), &os.ProcAttr{Files: []*os.File{in, stdout, stderr}})
	in.Close()
	if err != nil {
		feed.Close()
		return 1, hint.With(fmt.Errorf("agmem-record context runs agmem beside it: %w", err),
			"install agmem and agmem-record together, as the README says, and install the hooks again")
	}
	go func() {
		feed.Write(payload) // agmem reads it whole, or exits: either ends the write
		feed.Close()
	}()
	st, err := p.Wait()
	switch {
	case err != nil:
		return 1, err
	case st.Exited():
		return min(st.ExitCode(), 1), nil // agmem never exits 2; nor does its hook
	}
	return 1, fmt.Errorf("agmem context ended: %s", st)
}

// besideThis is the absolute path of name in the directory this binary was run from:
// the one its path names (hooks name it whole, links and all, so a package manager's
// link farm finds its own), else the first directory on $PATH that holds name.
func besideThis(name string) (string, error) {
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	if strings.ContainsRune(os.Args[0], filepath.Separator) {
		return filepath.Abs(filepath.Join(filepath.Dir(os.Args[0]), name))
	}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		path := filepath.Join(dir, name)
		if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return filepath.Abs(path)
		}
	}
	return "", hint.With(errors.New("agmem-record context: no agmem on $PATH"),
		"run agmem-record by its path, beside agmem, as agmem hooks install writes it")
}
