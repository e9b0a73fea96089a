package journal

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/agmem/agmem/internal/failpoint"
	"github.com/agmem/agmem/internal/flock"
	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/memory"
)

// A Staging is one large append made in parts. bbolt holds every value a transaction
// puts, and every page it writes, in memory until it commits: one transaction of a
// 100,000-line --jsonl held about 500 MB. Stage stores entries in transactions of their
// own, under keys that no index names, so that no reader finds them; Journal.Append
// with the staging indexes them all in one last transaction, and they become visible
// together, as one transaction's would.
//
// A staging is written down in the meta bucket with the entries it stored, and holds a
// lock file while it runs. What a staging left behind when its process died before
// Append is dropped by the next staging and by Compact; until then Check and Inventory
// pass it by.
type Staging struct {
	j       *Journal
	id      string
	lock    *flock.Lock
	staged  []seqRange
	idleGap time.Duration
	now     time.Time
	// What Stage placed in sessions, as Append would have: the open session the entries
	// that name none joined, or a session boundary passed. A staging takes the open
	// session as it is when it first needs it.
	open   *openSession
	closed bool
	placed bool
}

// ErrStagingDropped is returned when what a staging stored was dropped by another
// process, as if this one had died: nothing of it is recorded.
var ErrStagingDropped = hint.NewCause("what this record stored so far was dropped by another agmem process; nothing was recorded",
	"record the same input again (what was recorded before is kept once); leave .agmem/staging-*.lock files alone")

// seqRange is the entries one part stored: sequences From to To, both included (bbolt
// gives one transaction's sequences one after the other).
type seqRange struct {
	From uint64 `json:"from"`
	To   uint64 `json:"to"`
}

// StartStaging begins a large append, first dropping what stagings of processes that
// died left behind. Entries that name no session are placed as Append places them with
// idleGap and now. Close it when done, whether or not Append was called.
func (j *Journal) StartStaging(now time.Time, idleGap time.Duration) (*Staging, error) {
	id := memory.NewID(now)
	lock, err := flock.TryAcquire(stagingLock(j, id))
	if err != nil {
		return nil, j.classify(err)
	}
	s := &Staging{j: j, id: id, lock: lock, idleGap: idleGap, now: now}
	if err := j.update(func(tx *bolt.Tx) error { return dropAbandonedStagings(tx, j) }); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Stage stores the entries of ps in a transaction of its own, and keeps in ps only what
// Journal.Append needs of them. Those that name no session are placed first, as Append
// would place them: memory follows the part, whatever the input names. Every entry
// Append is given must have gone through Stage.
func (s *Staging) Stage(ps []Prepared) error {
	if err := s.place(ps); err != nil {
		return err
	}
	var part seqRange
	err := s.j.update(func(tx *bolt.Tx) error {
		part = seqRange{}
		if err := s.check(tx); err != nil {
			return err
		}
		entries := tx.Bucket(bucketEntries)
		entries.FillPercent = appendFill
		for _, p := range ps {
			if p.value == nil || p.seq != 0 {
				continue
			}
			seq, err := entries.NextSequence()
			if err != nil {
				return err
			}
			if err := entries.Put(seqKey(seq), p.value); err != nil {
				return err
			}
			if part.From == 0 {
				part.From = seq
			}
			part.To = seq
		}
		if part.From == 0 {
			return nil
		}
		return putJSON(tx.Bucket(bucketMeta), stagingKey(s.id), append(s.staged[:len(s.staged):len(s.staged)], part))
	})
	if err != nil || part.From == 0 {
		return err
	}
	s.staged = append(s.staged, part)
	seq := part.From
	for i := range ps {
		if p := &ps[i]; p.value != nil && p.seq == 0 {
			p.seq, p.value = seq, nil
			seq++
		}
	}
	failpoint.Hit("staged-part") // a part is stored, and no index names it yet
	return nil
}

// place places and encodes the entries of ps that name no session, in order, as
// appendAll does.
func (s *Staging) place(ps []Prepared) error {
	for i := range ps {
		p := &ps[i]
		event := p.event()
		if event == "SessionStart" {
			s.open, s.closed, s.placed = nil, true, true
		}
		if e := p.entry; e != nil {
			if (e.Observation != nil || e.Event != nil) && e.Session() == "" {
				if s.open == nil {
					err := s.j.view(func(tx *bolt.Tx) error {
						s.open = currentSession(tx, s.idleGap, s.now, s.closed)
						return nil
					})
					if err != nil {
						return err
					}
				}
				e.SetSession(s.open.ID)
				s.placed = true
			}
			if err := e.Validate(); err != nil {
				return fmt.Errorf("entry %s: %w", e.ID(), err)
			}
			enc, err := encoded(*e)
			if err != nil {
				return err
			}
			*p = enc
		}
		if event == "SessionEnd" {
			s.open, s.closed, s.placed = nil, true, true
		}
	}
	return nil
}

// stagingGCPercent is the collector's setting while a staging's last transaction runs.
const stagingGCPercent = 50

// check makes sure that what the staging stored is still there: another process drops
// a staging whose lock file it can take, and someone may have removed the file.
func (s *Staging) check(tx *bolt.Tx) error {
	if len(s.staged) > 0 && tx.Bucket(bucketMeta).Get(stagingKey(s.id)) == nil {
		return fmt.Errorf("%w (was %s removed?)", ErrStagingDropped, stagingLock(s.j, s.id))
	}
	return nil
}

// Close ends the staging. Entries it staged and no append recorded are dropped: those
// its record in the journal names, whatever this process believes it stored.
func (s *Staging) Close() error {
	var err error
	if len(s.staged) > 0 {
		err = s.j.update(func(tx *bolt.Tx) error {
			key := stagingKey(s.id)
			raw := tx.Bucket(bucketMeta).Get(key)
			if raw == nil {
				return nil // recorded by Append, or dropped by another process
			}
			ranges, err := decodeRanges(key, raw)
			if err != nil {
				return err
			}
			return dropStaging(tx, key, ranges)
		})
	}
	s.lock.Release()
	os.Remove(stagingLock(s.j, s.id))
	return err
}

// stagingPrefix starts the meta keys of stagings under way: the prefix and the
// staging's id, its value the seqRanges it stored.
const stagingPrefix = "staging\x00"

func stagingKey(id string) []byte { return []byte(stagingPrefix + id) }

// stagingLock is the file a staging holds locked while its process lives.
func stagingLock(j *Journal, id string) string {
	return filepath.Join(filepath.Dir(j.path), "staging-"+id+".lock")
}

// dropAbandonedStagings drops what stagings of processes that died left behind, if
// there is any: a journal without any is not written to.
func (j *Journal) dropAbandonedStagings() error {
	found := false
	err := j.with(true, func(db *bolt.DB) error {
		return db.View(func(tx *bolt.Tx) error {
			if meta := tx.Bucket(bucketMeta); meta != nil {
				k, _ := meta.Cursor().Seek([]byte(stagingPrefix))
				found = bytes.HasPrefix(k, []byte(stagingPrefix))
			}
			return nil
		})
	})
	if err != nil || !found {
		return err
	}
	return j.update(func(tx *bolt.Tx) error { return dropAbandonedStagings(tx, j) })
}

// dropAbandonedStagings drops the staged entries of stagings whose process is gone:
// their lock file is free, or missing.
func dropAbandonedStagings(tx *bolt.Tx, j *Journal) error {
	type staging struct {
		key    []byte
		ranges []seqRange
	}
	var dropped []staging // dropped once the cursor is done
	err := eachStaging(tx, func(key []byte, ranges []seqRange) error {
		gone, err := abandoned(j, string(key[len(stagingPrefix):]))
		if gone {
			dropped = append(dropped, staging{bytes.Clone(key), ranges})
		}
		return err
	})
	if err != nil {
		return err
	}
	for _, d := range dropped {
		if err := dropStaging(tx, d.key, d.ranges); err != nil {
			return err
		}
	}
	// A process killed before it staged anything left its lock file and no record.
	files, _ := filepath.Glob(stagingLock(j, "*"))
	for _, f := range files {
		id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "staging-"), ".lock")
		if tx.Bucket(bucketMeta).Get(stagingKey(id)) == nil {
			if _, err := abandoned(j, id); err != nil {
				return err
			}
		}
	}
	return nil
}

// abandoned says whether the process of staging id is gone, its lock file free or
// missing, and then removes the file.
func abandoned(j *Journal, id string) (bool, error) {
	lock, err := flock.TryAcquire(stagingLock(j, id))
	if errors.Is(err, flock.ErrTimeout) {
		return false, nil // its process is still at work
	}
	if err != nil {
		return false, err
	}
	lock.Release()
	os.Remove(stagingLock(j, id))
	return true, nil
}

// dropStaging deletes a staging's entries and its record.
func dropStaging(tx *bolt.Tx, key []byte, ranges []seqRange) error {
	entries := tx.Bucket(bucketEntries)
	for _, r := range ranges {
		for seq := r.From; seq <= r.To && seq != 0; seq++ {
			if err := entries.Delete(seqKey(seq)); err != nil {
				return err
			}
		}
	}
	return tx.Bucket(bucketMeta).Delete(key)
}

// eachStaging calls fn with each staging under way, in the order of their keys.
func eachStaging(tx *bolt.Tx, fn func(key []byte, ranges []seqRange) error) error {
	c := tx.Bucket(bucketMeta).Cursor()
	prefix := []byte(stagingPrefix)
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		ranges, err := decodeRanges(k, v)
		if err != nil {
			return err
		}
		if err := fn(k, ranges); err != nil {
			return err
		}
	}
	return nil
}

// decodeRanges reads the record of the staging whose meta key is key.
func decodeRanges(key, raw []byte) ([]seqRange, error) {
	var ranges []seqRange
	if err := json.Unmarshal(raw, &ranges); err != nil {
		return nil, fmt.Errorf("staging %q: %w", key, err)
	}
	return ranges, nil
}

// stagedSeqs reports whether an entries key belongs to a staging under way or left
// behind: no index names it yet, and none may.
func stagedSeqs(tx *bolt.Tx) (func(key []byte) bool, error) {
	var all []seqRange
	err := eachStaging(tx, func(_ []byte, ranges []seqRange) error {
		all = append(all, ranges...)
		return nil
	})
	return func(key []byte) bool {
		if len(key) != 8 {
			return false
		}
		seq := binary.BigEndian.Uint64(key)
		for _, r := range all {
			if r.From <= seq && seq <= r.To {
				return true
			}
		}
		return false
	}, err
}
