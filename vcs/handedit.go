package vcs

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
)

// withoutHandEdits drops the changes whose file a person has edited since an earlier
// Materialize wrote it. Materialize runs again for a commit whose flush died before it
// finished, and must not undo an edit made in between.
func (l *IndexLock) withoutHandEdits(changes []Change) []Change {
	kept := make([]Change, 0, len(changes))
	for _, c := range changes {
		if !l.editedByHand(c) {
			kept = append(kept, c)
		}
	}
	return kept
}

// editedByHand says whether the index records the change's blob at its path, and the
// worktree file, there still, no longer holds that blob. Without such an index entry, a
// file that differs is one a killed Materialize left half written.
func (l *IndexLock) editedByHand(c Change) bool {
	i := sort.Search(len(l.entries), func(i int) bool { return l.entries[i].name >= c.Path })
	if i == len(l.entries) || l.entries[i].name != c.Path || !l.entries[i].holds(c.hash) {
		return false
	}
	data, err := os.ReadFile(filepath.Join(l.r.Root, filepath.FromSlash(c.Path)))
	return err == nil && plumbing.ComputeHash(plumbing.BlobObject, data) != c.hash
}

// flagStage are the bits of an entry's flags that hold its merge stage.
const flagStage = 0x3000

// holds says whether the entry records blob h at stage 0.
func (e indexEntry) holds(h plumbing.Hash) bool {
	const hashAt = 40 // after ten 32-bit stat fields
	flags := binary.BigEndian.Uint16(e.raw[hashAt+len(h):])
	return flags&flagStage == 0 && bytes.Equal(e.raw[hashAt:hashAt+len(h)], h[:])
}
