package vcs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agmem/agmem/internal/failpoint"
)

// IndexLock is git's index.lock, held while agmem moves the branch, as `git commit`
// holds it: no git command can commit from the old index between the moment the branch
// moves and the moment the index shows the new files (such a commit would delete them).
// The index is read when the lock is taken, so an index agmem cannot update is refused
// before anything is committed.
type IndexLock struct {
	r     *Git
	lock  *lockFile
	index *gitIndex
}

// LockIndex takes .git/index.lock and reads the index.
func (r *Git) LockIndex() (*IndexLock, error) {
	indexPath := filepath.Join(r.gitDir, "index")
	lock, err := r.takeLock(indexPath)
	if err != nil {
		return nil, err
	}
	old, err := os.ReadFile(indexPath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		lock.abort()
		return nil, fmt.Errorf("read index: %w", err)
	}
	index, err := readIndex(old, r.gitDir)
	if err != nil {
		lock.abort()
		return nil, err
	}
	return &IndexLock{r: r, lock: lock, index: index}, nil
}

// Release gives the lock up, leaving the index as it was, unless Materialize wrote it.
func (l *IndexLock) Release() {
	l.lock.abort()
	l.index.close()
}

// Materialize writes committed files into the worktree and records them in the index,
// so that the worktree, the index and HEAD agree (`git status` is clean for them), then
// releases the lock. It may be run again for the same files: it converges, except that
// a file a person edited since it was written is left as they made it.
func (l *IndexLock) Materialize(changes []Change) error {
	r := l.r
	changes = l.withoutRecorded(changes)
	safeDirs := map[string]bool{} // directories known to exist and not to be links
	stats := make(map[string]os.FileInfo, len(changes))
	for i, c := range changes {
		if err := checkPath(c.Path); err != nil {
			return err
		}
		if err := r.prepareDirs(c.Path, safeDirs); err != nil {
			return err
		}
		full := filepath.Join(r.Root, filepath.FromSlash(c.Path))
		if fi, err := os.Lstat(full); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("write %s: %s is a symbolic link", c.Path, full)
		}
		fi, err := writeFile(full, c.Data)
		if err != nil {
			return fmt.Errorf("write %s: %w", c.Path, err)
		}
		stats[c.Path] = fi // the last change of a path wins, as it did in the worktree
		if i == len(changes)/2 {
			failpoint.Hit("materialize-midway")
		}
	}
	failpoint.Hit("materialize-before-index")

	latest := make(map[string]Change, len(changes))
	for _, c := range changes {
		latest[c.Path] = c
	}
	entries := make([]indexEntry, 0, len(latest))
	for path, c := range latest {
		entries = append(entries, newIndexEntry(path, c.Hash, stats[path]))
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	u := l.index.withEntries(r.gitDir, entries, gitBool(r.GitConfig()("core.splitIndex")))
	if err := u.place(); err != nil {
		return fmt.Errorf("write shared index: %w", err)
	}
	if _, err := l.lock.Write(u.index); err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	if err := l.lock.commit(false); err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	u.finish()
	return nil
}

// writeFile writes a worktree file and returns its stat data as the write left it,
// read from the file still open, as git's checkout does: stat data read after every
// file was written recorded as clean an edit a person made in between.
func writeFile(path string, data []byte) (os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	_, err = f.Write(data)
	var fi os.FileInfo
	if err == nil {
		fi, err = f.Stat()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return fi, err
}

// gitBool is a boolean git setting as "true" or "false", or "" when it is unset or not
// one git reads as either.
func gitBool(v string) string {
	switch strings.ToLower(v) {
	case "true", "yes", "on", "1":
		return "true"
	case "false", "no", "off", "0":
		return "false"
	}
	return ""
}

// prepareDirs makes the directories on path's way, refusing any that is a symbolic
// link: writing through one could land outside the worktree. Directories already seen
// in this call are not looked at again.
func (r *Git) prepareDirs(path string, safe map[string]bool) error {
	dir := ""
	parts := strings.Split(path, "/")
	for _, part := range parts[:len(parts)-1] {
		dir += part + "/"
		if safe[dir] {
			continue
		}
		full := filepath.Join(r.Root, filepath.FromSlash(dir))
		fi, err := os.Lstat(full)
		switch {
		case errors.Is(err, os.ErrNotExist):
			if err := os.Mkdir(full, 0o755); err != nil {
				return err
			}
		case err != nil:
			return err
		case fi.Mode()&os.ModeSymlink != 0:
			return fmt.Errorf("write %s: %s is a symbolic link", path, full)
		case !fi.IsDir():
			return fmt.Errorf("write %s: %s is not a directory", path, full)
		}
		safe[dir] = true
	}
	return nil
}
