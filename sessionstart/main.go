package sessionstart

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

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
	if givenKept(args, payload, stdout, stderr) {
		return 0
	}
	code, err := runAgmem(args, payload, stdout, stderr)
	if err != nil {
		hint.Print(stderr, err, hint.For(err))
		return 1
	}
	return code
}

// givenKept gives what args and payload ask for from the kept file, and says whether it
// did.
func givenKept(args []string, payload []byte, stdout, stderr io.Writer) bool {
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
	if err != nil {
		return false
	}
	if r.Off {
		return true
	}
	found, ok := Lookup(repo, r.Project, r.MaxChars)
	if !ok {
		return false
	}
	if found.Behind {
		IndexInBackground(besideThis("agmem"), repo)
	}
	r.Give(stdout, stderr, found.Block)
	return true
}

// IndexInBackground starts "agmem index" with the agmem binary, which brings the index
// up to date for the next session, and does not wait for it. It holds none of this
// process's files: an agent that waits for its hook's output to end does not wait for
// it.
func IndexInBackground(agmem string, repo memrepo.Repo) {
	p, err := os.StartProcess(agmem, []string{agmem, "--repo", repo.Root, "index"}, &os.ProcAttr{Dir: repo.Root})
	if err == nil {
		p.Release()
	}
}

// runAgmem runs "agmem context" with args and payload on its stdin: the agmem beside
// this binary, where the README's install puts it, and where agmem hooks install
// found it. Its exit code is agmem's: 0, or 1 when it said why. It starts the process
// itself: os/exec would be one more package for every recording hook to load.
func runAgmem(args []string, payload []byte, stdout, stderr *os.File) (int, error) {
	agmem := besideThis("agmem")
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
	if err != nil || !st.Success() {
		return 1, err
	}
	return 0, nil
}

// besideThis is the file name in the directory this binary was run from: the one its
// path names (hooks name it whole, links and all, so a package manager's link farm
// finds its own), else the first directory on $PATH that holds name.
func besideThis(name string) string {
	if strings.ContainsRune(os.Args[0], filepath.Separator) {
		return filepath.Join(filepath.Dir(os.Args[0]), name)
	}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return filepath.Join(dir, name)
		}
	}
	return name
}
