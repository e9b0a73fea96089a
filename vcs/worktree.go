package vcs

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/agmem/agmem/failpoint"
)

// Materialize writes committed files into the worktree and records them in the index,
// so that the worktree, the index and HEAD agree (`git status` is clean for them). It
// may be run again for the same files: it converges.
func (r *Repo) Materialize(changes []Change) error {
	for i, c := range changes {
		if err := checkPath(c.Path); err != nil {
			return err
		}
		if err := r.noSymlinkOn(c.Path); err != nil {
			return err
		}
		full := filepath.Join(r.Root, filepath.FromSlash(c.Path))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, c.Data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", c.Path, err)
		}
		if i == len(changes)/2 {
			failpoint.Hit("materialize-midway")
		}
	}
	failpoint.Hit("materialize-before-index")
	return r.updateIndex(changes)
}

// noSymlinkOn refuses path when the worktree holds a symbolic link on its way or at
// its end: writing through one could land outside the worktree.
func (r *Repo) noSymlinkOn(path string) error {
	p := r.Root
	for _, part := range strings.Split(path, "/") {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("write %s: %s is a symbolic link", path, p)
		}
	}
	return nil
}

// updateIndex rewrites .git/index with an entry for each change, taking git's
// index.lock so that a git command running at the same time is not undone.
func (r *Repo) updateIndex(changes []Change) error {
	indexPath := filepath.Join(r.gitDir, "index")
	lockPath := indexPath + ".lock"
	var lock *os.File
	for attempt := 0; ; attempt++ {
		var err error
		lock, err = os.OpenFile(lockPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("lock index: %w", err)
		}
		if fi, serr := os.Stat(lockPath); serr == nil && time.Since(fi.ModTime()) > staleRefLock {
			os.Remove(lockPath)
			continue
		}
		if attempt == 100 {
			return fmt.Errorf("lock index: %s exists: another git process is running", lockPath)
		}
		time.Sleep(20 * time.Millisecond)
	}
	done := false
	defer func() {
		if !done {
			lock.Close()
			os.Remove(lockPath)
		}
	}()

	idx := &index.Index{Version: 2}
	if f, err := os.Open(indexPath); err == nil {
		err = index.NewDecoder(bufio.NewReader(f)).Decode(idx)
		f.Close()
		if err != nil {
			return fmt.Errorf("read index: %w", err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("read index: %w", err)
	}
	if idx.Version > 3 {
		idx.Version = 3 // go-git encodes up to version 3; git reads every version
	}
	// Extensions describe the old entries (cached trees, untracked files); go-git does
	// not write them, and git rebuilds them as it needs.
	idx.Cache, idx.ResolveUndo, idx.EndOfIndexEntry = nil, nil, nil

	// A path agmem writes replaces every entry of that path, conflict stages included.
	written := make(map[string]bool, len(changes))
	for _, c := range changes {
		written[c.Path] = true
	}
	kept := idx.Entries[:0]
	for _, e := range idx.Entries {
		if !written[e.Name] {
			kept = append(kept, e)
		}
	}
	idx.Entries = kept
	for i := len(changes) - 1; i >= 0; i-- {
		c := changes[i]
		if !written[c.Path] {
			continue // a later change of the same path won
		}
		written[c.Path] = false
		e := &index.Entry{Name: c.Path, Hash: c.hash, Mode: filemode.Regular}
		fi, err := os.Lstat(filepath.Join(r.Root, filepath.FromSlash(c.Path)))
		if err != nil {
			return fmt.Errorf("stat %s: %w", c.Path, err)
		}
		fillStat(e, fi)
		idx.Entries = append(idx.Entries, e)
	}
	sort.SliceStable(idx.Entries, func(i, j int) bool {
		a, b := idx.Entries[i], idx.Entries[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Stage < b.Stage
	})

	w := bufio.NewWriter(lock)
	if err := index.NewEncoder(w).Encode(idx); err != nil {
		return fmt.Errorf("encode index: %w", err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	if err := lock.Close(); err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	if err := os.Rename(lockPath, indexPath); err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	done = true
	return nil
}
