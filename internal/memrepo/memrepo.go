// Package memrepo owns the layout of a memory repo on disk: how one is found (FORMAT.md §Locating)
// and where its parts live (the worktree, git's .git, agmem's own .agmem state
// directory, which git never sees). It knows nothing of git, so that agmem-record, which
// hooks run, links no git code.
package memrepo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/journal"
)

// StateDirName is agmem's own directory inside a memory repo.
const StateDirName = ".agmem"

// ErrNotFound is returned when no memory repo is at or above a directory.
var ErrNotFound = errors.New("no memory repo")

// Repo is a memory repo: paths only, nothing held open.
type Repo struct {
	Root string
	// LockUntil is when waiting for the journal's lock ends, for all its journal's calls
	// together: each waits what is left, but at least MinLockWait (a moment's hold of
	// another hook's). Zero: each waits journal.DefaultTimeout.
	LockUntil time.Time
}

// MinLockWait is the least a call of a journal with a LockUntil waits for its lock.
const MinLockWait = 50 * time.Millisecond

// StateDir is where the journal and agmem's locks live.
func (r Repo) StateDir() string { return filepath.Join(r.Root, StateDirName) }

// GitDir is the repo's git directory.
func (r Repo) GitDir() string { return filepath.Join(r.Root, ".git") }

// Journal is the repo's journal.
func (r Repo) Journal() *journal.Journal {
	j := journal.At(r.StateDir())
	if !r.LockUntil.IsZero() {
		j.Timeout = max(time.Until(r.LockUntil), MinLockWait)
	}
	return j
}

// At takes dir as a memory repo, checking that it is one.
func At(dir string) (Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Repo{}, err
	}
	fi, err := os.Stat(filepath.Join(abs, StateDirName))
	if errors.Is(err, fs.ErrPermission) { // there, and not this user's to read
		return Repo{}, hint.With(fmt.Errorf("memory repo %s: %w", abs, err),
			"run agmem as the user who owns the memory repo, or give this one access to it")
	}
	if err != nil || !fi.IsDir() {
		return Repo{}, fmt.Errorf("%w at %s", ErrNotFound, abs)
	}
	return Repo{Root: abs}, nil
}

// Find returns the nearest memory repo at or above dir.
func Find(dir string) (Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Repo{}, err
	}
	for d := abs; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(filepath.Join(d, StateDirName)); err == nil && fi.IsDir() {
			return Repo{Root: d}, nil
		}
		if filepath.Dir(d) == d {
			return Repo{}, fmt.Errorf("%w here or above %s", ErrNotFound, abs)
		}
	}
}

// InitHint is what to do of dir, named as a memory repo that is none: make it one,
// unless it is a file, which none can be.
func InitHint(dir string) string {
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return dir + " is a file: name the directory of the memory repo (agmem init DIR makes one)"
	}
	return `run "agmem init ` + dir + `"`
}

// RepoFlagUsage is what a command line says of --repo, the flag Locate's given comes from.
const RepoFlagUsage = "the memory repo (default: $AGMEM_REPO, else the nearest .agmem/ at or above here)"

// Locate finds the memory repo (FORMAT.md §Locating): the directory given (by --repo), else
// $AGMEM_REPO, else the nearest at or above the working directory. Its errors say what
// to do.
func Locate(given string, getenv func(string) string) (Repo, error) {
	if given != "" {
		r, err := At(given)
		if errors.Is(err, ErrNotFound) {
			err = hint.With(err, InitHint(given))
		}
		return r, err
	}
	if dir := getenv("AGMEM_REPO"); dir != "" {
		r, err := At(dir)
		if errors.Is(err, ErrNotFound) {
			err = hint.With(err, InitHint(dir))
		}
		if err != nil {
			err = fmt.Errorf("AGMEM_REPO: %w", err)
		}
		return r, err
	}
	wd, err := os.Getwd()
	if err != nil {
		return Repo{}, err
	}
	r, err := Find(wd)
	if err != nil {
		return r, hint.With(err, `run "agmem init" there, or set AGMEM_REPO`)
	}
	return r, nil
}
