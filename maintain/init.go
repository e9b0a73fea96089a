package maintain

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agmem/agmem/flush"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/vcs"
)

const gitignoreLine = ".agmem/"

// Init makes dir a memory repo: a git repository (kept if there is one, on its own
// branch; else new, on main), .agmem/ with an empty journal, and a committed .gitignore
// that keeps .agmem/ out of git. Running it again changes nothing. It reports what it
// did, one line each.
func Init(dir string) (memrepo.Repo, []string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return memrepo.Repo{}, nil, err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return memrepo.Repo{}, nil, err
	}
	var did []string
	git, created, err := vcs.Init(abs)
	if err != nil {
		return memrepo.Repo{}, nil, err
	}
	if created {
		did = append(did, "created git repository on branch main")
	}
	r := memrepo.Repo{Root: abs}
	// What could refuse the .gitignore commit is checked before .agmem/ is made, so
	// that a refused init leaves nothing behind.
	if _, err := ignoreNeedsCommit(r, git); err != nil {
		return memrepo.Repo{}, nil, err
	}
	if _, err := os.Stat(r.StateDir()); errors.Is(err, os.ErrNotExist) {
		if err := os.Mkdir(r.StateDir(), 0o755); err != nil {
			return memrepo.Repo{}, nil, err
		}
		did = append(did, "created .agmem/")
	}
	if _, err := os.Stat(r.Journal().Path()); errors.Is(err, os.ErrNotExist) {
		if err := r.Journal().Create(); err != nil {
			return memrepo.Repo{}, nil, err
		}
		did = append(did, "created the journal .agmem/journal.db")
	}
	committed, err := ensureIgnored(r, git)
	if err != nil {
		return memrepo.Repo{}, nil, err
	}
	if committed {
		did = append(did, "committed .gitignore with .agmem/")
	}
	return r, did, nil
}

// ErrGitignoreChanged is returned by Init when .gitignore holds changes not yet
// committed and does not keep .agmem/ out: committing agmem's line would either take
// those changes along or undo them.
var ErrGitignoreChanged = errors.New(".gitignore has changes that are not committed")

// ensureIgnored makes sure the branch's .gitignore names .agmem/, committing it if not.
func ensureIgnored(r memrepo.Repo, git *vcs.Git) (bool, error) {
	lock, err := flush.Lock(r.StateDir())
	if err != nil {
		return false, err
	}
	defer lock.Release()
	current, err := ignoreNeedsCommit(r, git)
	if current == nil || err != nil {
		return false, err
	}
	branch, tip, err := git.Head()
	if err != nil {
		return false, err
	}
	next := current
	if len(next) > 0 && !strings.HasSuffix(string(next), "\n") {
		next = append(next, '\n')
	}
	next = append(next, gitignoreLine+"\n"...)
	draft, err := git.NewDraft(tip)
	if err != nil {
		return false, err
	}
	if err := draft.Put(".gitignore", next); err != nil {
		return false, err
	}
	index, err := git.LockIndex()
	if err != nil {
		return false, err
	}
	defer index.Release()
	if _, err := draft.Commit(branch, "agmem: keep .agmem/ out of git\n", time.Now()); err != nil {
		return false, err
	}
	return true, index.Materialize(draft.Changes())
}

// ignoreNeedsCommit returns the committed .gitignore when agmem must add its line to
// it (an empty, non-nil slice when there is none yet), and nil when nothing is to do.
func ignoreNeedsCommit(r memrepo.Repo, git *vcs.Git) ([]byte, error) {
	_, tip, err := git.Head()
	if err != nil {
		return nil, err
	}
	committed, err := git.FileAt(tip, ".gitignore")
	if err != nil {
		return nil, err
	}
	onDisk, err := os.ReadFile(filepath.Join(r.Root, ".gitignore"))
	if errors.Is(err, os.ErrNotExist) {
		onDisk, err = committed, nil
	}
	switch {
	case err != nil:
		return nil, err
	case ignores(committed) || ignores(onDisk):
		return nil, nil
	case !bytes.Equal(onDisk, committed):
		return nil, ErrGitignoreChanged
	}
	return append([]byte{}, committed...), nil
}

// ignores reports whether a .gitignore keeps .agmem/ out.
func ignores(gitignore []byte) bool {
	for _, line := range strings.Split(string(gitignore), "\n") {
		if l := strings.TrimSpace(line); l == gitignoreLine || l == "/"+gitignoreLine || l == ".agmem" || l == "/.agmem" {
			return true
		}
	}
	return false
}
