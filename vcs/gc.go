package vcs

import (
	"bytes"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/shell"
)

// Packed is what PackObjects did.
type Packed struct {
	By            string // "git gc", or "agmem" when git's CLI is not there
	Before, After int64  // bytes under .git/objects
}

// packDepth bounds a chain of deltas in the packs git writes of a memory repo (git's
// own default is 50). Reading a blob resolves its chain; on a year of sessions packed
// with chains of 50, a search that reads its hits' records took 0.32 s, and 0.08 s with
// chains of at most 10 (the pack was no bigger).
const packDepth = "10"

// PackObjects packs the repository's objects. With git's CLI on $PATH, it runs `git gc`,
// which also compresses agmem's packs with deltas (agmem writes whole objects) and
// drops what nothing has reached for two weeks. Without it, agmem writes the loose
// objects (those git commands wrote) into one pack and merges packs as after a flush.
// Call it under the writer lock.
func (r *Git) PackObjects() (Packed, error) {
	p := Packed{By: "git gc"}
	var err error
	if p.Before, err = r.objectBytes(); err != nil {
		return p, err
	}
	if _, lookErr := exec.LookPath("git"); lookErr == nil {
		cmd := exec.Command("git", "-c", "pack.depth="+packDepth, "gc", "--quiet")
		cmd.Dir = r.Root
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			line, _, _ := bytes.Cut(bytes.TrimSpace(stderr.Bytes()), []byte("\n"))
			err = fmt.Errorf("git gc: %w: %s", err, line)
			if bytes.Contains(line, []byte("dubious ownership")) {
				// go-git, which flushes, does not ask; git's CLI refuses another user's repo.
				err = hint.With(err, fmt.Sprintf("git refuses a repository another user owns: git config --global --add safe.directory %s; the journal was compacted already", shell.Readable(r.Root)))
			}
			return p, err
		}
		r.reindex()
	} else {
		p.By = "agmem"
		if err := r.packLoose(); err != nil {
			return p, err
		}
		if err := r.MergePacks(); err != nil {
			return p, err
		}
	}
	p.After, err = r.objectBytes()
	return p, err
}

// packLoose writes the loose objects into one pack, then removes them.
func (r *Git) packLoose() error {
	var loose []plumbing.Hash
	if err := r.st.ForEachObjectHash(func(h plumbing.Hash) error {
		loose = append(loose, h)
		return nil
	}); err != nil {
		return fmt.Errorf("list loose objects: %w", err)
	}
	if len(loose) == 0 {
		return nil
	}
	if _, err := r.writePack(loose, r.wholeObject); err != nil {
		return fmt.Errorf("pack loose objects: %w", err)
	}
	for _, h := range loose { // each is in the pack, synced, by now
		if err := r.st.DeleteLooseObject(h); err != nil {
			return fmt.Errorf("pack loose objects: %w", err)
		}
	}
	return nil
}

// objectBytes is the size of the files under .git/objects.
func (r *Git) objectBytes() (int64, error) {
	var n int64
	err := filepath.WalkDir(filepath.Join(r.gitDir, "objects"), func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if fi, err := d.Info(); err == nil {
			n += fi.Size()
		}
		return nil
	})
	return n, err
}
