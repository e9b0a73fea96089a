package vcs

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
)

// withoutRecorded drops the changes whose file is there and recorded in the index
// already. Materialize runs again for a commit whose flush died before it finished, and
// the index is written last, all at once: a change it records was written whole by an
// earlier Materialize. Writing it again would undo an edit a person made since, or,
// killed halfway, leave a file cut short that the index says is whole, which the next
// run would take for an edit. A recorded file that is gone is written again.
func (l *IndexLock) withoutRecorded(changes []Change) []Change {
	kept := make([]Change, 0, len(changes))
	for _, c := range changes {
		if !l.recorded(c) {
			kept = append(kept, c)
		}
	}
	return kept
}

func (l *IndexLock) recorded(c Change) bool {
	if e, ok := l.index.lookup(c.Path); !ok || !e.holds(c.Hash) {
		return false
	}
	_, err := os.Lstat(filepath.Join(l.r.Root, filepath.FromSlash(c.Path)))
	return err == nil
}

// flagStage are the bits of an entry's flags that hold its merge stage.
const flagStage = 0x3000

// holds says whether the entry records blob h at stage 0.
func (e indexEntry) holds(h plumbing.Hash) bool {
	const hashAt = 40 // after ten 32-bit stat fields
	flags := binary.BigEndian.Uint16(e.raw[hashAt+len(h):])
	return flags&flagStage == 0 && bytes.Equal(e.raw[hashAt:hashAt+len(h)], h[:])
}
