package maintain

import (
	"fmt"
	"time"

	"github.com/agmem/agmem/flush"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/journal"
	"github.com/agmem/agmem/vcs"
)

// Collected is what a garbage collection did.
type Collected struct {
	Forgotten                   journal.Forgotten
	JournalBefore, JournalAfter int64 // bytes of .agmem/journal.db
	Objects                     vcs.Packed
}

// GC keeps a memory repo small: the journal forgets the sessions wholly committed and
// older than keep (git holds them), its file is compacted, and git's objects are
// packed. Records go on meanwhile (they wait a moment for the compaction, then keep
// their calls aside for the journal's next write); flushes wait for the packing, which
// holds the writer lock.
func GC(r memrepo.Repo, keep time.Duration, now time.Time) (Collected, error) {
	var c Collected
	if keep <= 0 {
		return c, fmt.Errorf("gc: keep must be positive, not %s", keep)
	}
	j := r.Journal()
	var err error
	if c.Forgotten, err = j.Forget(now.Add(-keep)); err != nil {
		return c, err
	}
	if c.JournalBefore, c.JournalAfter, err = j.Compact(); err != nil {
		return c, err
	}
	// What records kept aside while the compaction held the journal goes in now, not
	// at the next record or flush.
	if err := j.Drain(); err != nil {
		return c, err
	}
	git, err := vcs.Open(r.Root)
	if err != nil {
		return c, err
	}
	lock, err := flush.Lock(r.StateDir())
	if err != nil {
		return c, err
	}
	c.Objects, err = git.PackObjects()
	lock.Release()
	if err != nil {
		return c, err
	}
	return c, j.NoteGC(journal.GCInfo{At: now.UTC(), Forgotten: c.Forgotten})
}
