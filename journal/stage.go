package journal

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
// 100,000-line --jsonl held about 500 MB. Stage stores a part's entries in a
// transaction of its own, and their index keys in indexes of the staging's own (see
// index.go), where no reader looks; Commit makes them all visible in one small
// transaction, as one transaction's would. Memory follows the part, not the input.
//
// A staging is written down in the meta bucket with the entries it stored, and holds a
// lock file while it runs. What a staging left behind when its process died before
// Commit is dropped by the next staging and by Compact; until then readers pass it by.
type Staging struct {
	j       *Journal
	id      string
	lock    *flock.Lock
	staged  []seqRange
	started bool // a part was stored, and the meta bucket names the staging
	// mark is the last sequence before the first part, and epoch the log's count then
	// (see recordedSince).
	mark, epoch uint64
	failed      bool // a part failed: its additions to sessions may be half made
	committed   bool // Commit made it visible: Close merges it
	idleGap     time.Duration
	now         time.Time
	// What Stage placed in sessions, as Append would have: the open session the entries
	// that name none joined, or a session boundary passed. A staging takes the open
	// session as it is when it first needs it.
	open   *openSession
	closed bool
	placed bool
	// sessions are what the staged entries add to each session's figures: Commit adds
	// them to the figures as they are then.
	sessions sessionUpdates
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
// idleGap and now. Close it when done, whether or not Commit was called.
func (j *Journal) StartStaging(now time.Time, idleGap time.Duration) (*Staging, error) {
	id := memory.NewID(now)
	lock, err := flock.TryAcquire(stagingLock(j, id))
	if err != nil {
		return nil, j.classify(err)
	}
	s := &Staging{j: j, id: id, lock: lock, idleGap: idleGap, now: now, sessions: sessionUpdates{}}
	if err := j.dropAbandonedStagings(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Stage records the entries of ps as Append would, in a transaction of its own, out of
// every reader's sight until Commit, and says what became of each: recorded, or kept
// once with an entry recorded before, or by an earlier part. Those that name no session
// are placed first, as Append would place them. After an error, the staging can only be
// closed.
func (s *Staging) Stage(ps []Prepared) ([]Appended, error) {
	if s.failed {
		return nil, errors.New("a part of this staging failed")
	}
	if err := s.place(ps); err != nil {
		return nil, err
	}
	var out []Appended
	var part seqRange
	err := s.j.update(func(tx *bolt.Tx) error {
		if err := s.check(tx); err != nil {
			return err
		}
		own, err := ownIndexes(tx, s.id)
		if err != nil {
			return err
		}
		entries := tx.Bucket(bucketEntries)
		entries.FillPercent = appendFill
		before := entries.Sequence()
		if !s.started {
			s.mark, s.epoch = before, visibleCount(tx)
		}
		a := newAppendTx(tx, s, len(ps))
		a.into = own
		out = make([]Appended, len(ps))
		for i, p := range ps {
			if out[i], err = a.appended(p); err != nil {
				return fmt.Errorf("entry %d: %w", i+1, err)
			}
		}
		if err := a.finish(); err != nil {
			return err
		}
		ranges := s.staged[:len(s.staged):len(s.staged)]
		if after := entries.Sequence(); after > before {
			part = seqRange{before + 1, after}
			ranges = append(ranges, part)
		}
		return putJSON(tx.Bucket(bucketMeta), stagingKey(s.id), ranges)
	})
	if err != nil {
		s.failed = true
		return nil, err
	}
	s.started = true
	if part.From != 0 {
		s.staged = append(s.staged, part)
	}
	failpoint.Hit("staged-part") // a part is stored, and no reader sees it yet
	return out, nil
}

// deferAnswer notes the entry stored under seq as the answer to a visible call
// reported before its result, which Commit makes: until then the call stays as every
// reader sees it.
func (s *Staging) deferAnswer(tx *bolt.Tx, seq uint64, kept string) error {
	answers, err := tx.Bucket(bucketStagings).Bucket([]byte(s.id)).CreateBucketIfNotExists(bucketAnswers)
	if err != nil {
		return err
	}
	return answers.Put(seqKey(seq), []byte(kept))
}

// bucketAnswers, in a staging's own bucket, holds the answers Commit makes: the seq of
// each stored answer → the id of the call it answers.
var bucketAnswers = []byte("answers")

// Commit makes everything the staging stored visible at once, in one transaction that
// makes its indexes a part: an entry recorded elsewhere meanwhile (the same id,
// or the same call) is dropped from it, and kept once; the answers to visible calls are
// made. It returns what became of those entries: by the id Stage said, what the journal
// holds for it now. Close then merges the part into the indexes.
func (s *Staging) Commit() (map[string]Appended, error) {
	if s.failed {
		return nil, errors.New("a part of this staging failed")
	}
	var changed map[string]Appended
	err := s.j.update(func(tx *bolt.Tx) error {
		changed = map[string]Appended{}
		if err := s.check(tx); err != nil {
			return err
		}
		a := newAppendTx(tx, nil, 0)
		for id, add := range s.sessions {
			a.sessions.get(tx, id).add(add)
		}
		stagings := tx.Bucket(bucketStagings)
		if own := stagings.Bucket([]byte(s.id)); own != nil {
			if err := s.dropRecordedElsewhere(a, own, changed); err != nil {
				return err
			}
			if err := answerCalls(a, own, changed); err != nil {
				return err
			}
		}
		if err := a.finish(); err != nil {
			return err
		}
		if s.placed { // it placed every entry, in this order
			if err := leaveOpen(tx, s.open, s.closed, s.now); err != nil {
				return err
			}
		}
		// No longer under way: its indexes are a part, which every reader sees.
		if err := tx.Bucket(bucketMeta).Delete(stagingKey(s.id)); err != nil {
			return err
		}
		return logVisible(tx, s.staged)
	})
	if err != nil {
		return nil, err
	}
	s.staged, s.started, s.committed = nil, false, true
	failpoint.Hit("staging-committed") // visible, in the parts, none merged yet
	return changed, nil
}

// dropRecordedElsewhere drops from a staging's own indexes (own) the entries that
// another process recorded since its first part, with the same id or the same call, and
// notes each in changed as a duplicate of the entry kept. Each part was checked against
// what was visible when it was stored: only what became visible since is looked at, and
// what the staging stored is not read again.
func (s *Staging) dropRecordedElsewhere(a *appendTx, own *bolt.Bucket, changed map[string]Appended) error {
	type found struct {
		seq      []byte
		kept     string
		noResult bool // the entry kept is a call reported before its result
	}
	var dups []found
	ownIDs, ownCalls := own.Bucket(bucketIDs), own.Bucket(bucketCalls)
	err := s.recordedSince(a.tx, func(e memory.Entry) error {
		h := headOf(e)
		if seq := ownIDs.Get([]byte(h.id)); seq != nil {
			dups = append(dups, found{bytes.Clone(seq), h.id, h.noResult})
		} else if h.toolUseID != "" {
			if seq := ownCalls.Get(sessionKey(h.session, []byte(h.toolUseID))); seq != nil {
				dups = append(dups, found{bytes.Clone(seq), h.id, h.noResult})
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, d := range dups {
		stored := a.entries.Get(d.seq)
		if stored == nil {
			continue // found twice, by its id and its call
		}
		e, err := decodeEntry(stored)
		if err != nil {
			return fmt.Errorf("decode staged entry %d: %w", seqOf(d.seq), err)
		}
		h := headOf(e)
		// The timeline's and pending set's keys hold the seq; the others name it.
		if err := own.Bucket(bucketTimeline).Delete(timelineKey(h.session, h.at, seqOf(d.seq))); err != nil {
			return err
		}
		if err := own.Bucket(bucketPending).Delete(sessionKey(h.session, d.seq)); err != nil {
			return err
		}
		named := []struct{ bucket, key []byte }{{bucketIDs, []byte(h.id)}}
		if h.toolUseID != "" {
			named = append(named, struct{ bucket, key []byte }{bucketCalls, sessionKey(h.session, []byte(h.toolUseID))})
		}
		for _, k := range named {
			if b := own.Bucket(k.bucket); bytes.Equal(b.Get(k.key), d.seq) {
				if err := b.Delete(k.key); err != nil {
					return err
				}
			}
		}
		a.sessions.get(a.tx, h.session).uncount(h)
		if d.noResult && !h.noResult && h.event == "" {
			// The call's result, staged, and its report before it, recorded meanwhile:
			// the result answers the report, as it would have had the report come first.
			if err := s.deferAnswer(a.tx, seqOf(d.seq), d.kept); err != nil {
				return err
			}
			continue
		}
		if err := a.entries.Delete(d.seq); err != nil {
			return err
		}
		changed[h.id] = Appended{ID: d.kept, Duplicate: true}
	}
	return nil
}

// recordedSince calls fn with each entry that became visible since the staging's first
// part: recorded after it (past s.mark, and not staged by a staging still under way),
// or made visible by a staging that committed after it (the log of visibleKey).
func (s *Staging) recordedSince(tx *bolt.Tx, fn func(memory.Entry) error) error {
	var under []seqRange // every staging's still under way, this one's too
	if err := eachStaging(tx, func(_ []byte, ranges []seqRange) error {
		under = append(under, ranges...)
		return nil
	}); err != nil {
		return err
	}
	slices.SortFunc(under, func(x, y seqRange) int { return cmp.Compare(x.From, y.From) })
	entries := tx.Bucket(bucketEntries)
	each := func(seq, stored []byte) error {
		e, err := decodeEntry(stored)
		if err != nil {
			return fmt.Errorf("decode entry %d: %w", seqOf(seq), err)
		}
		if e.Observation != nil && e.Observation.ToolName == "" {
			return nil // a forgotten call's id: it was there before
		}
		return fn(e)
	}
	c := entries.Cursor()
	for k, v := c.Seek(seqKey(s.mark + 1)); k != nil; {
		seq := seqOf(k)
		if i, found := slices.BinarySearchFunc(under, seq, func(r seqRange, seq uint64) int {
			switch {
			case r.To < seq:
				return -1
			case r.From > seq:
				return 1
			}
			return 0
		}); found {
			k, v = c.Seek(seqKey(under[i].To + 1))
			continue
		}
		if err := each(k, v); err != nil {
			return err
		}
		k, v = c.Next()
	}
	meta := tx.Bucket(bucketMeta)
	lc := meta.Cursor()
	for k, v := lc.Seek(visibleKey(s.epoch + 1)); k != nil && bytes.HasPrefix(k, []byte(visiblePrefix)); k, v = lc.Next() {
		ranges, err := decodeRanges(k, v)
		if err != nil {
			return err
		}
		for _, r := range ranges {
			for seq := max(r.From, 1); seq <= r.To && seq <= s.mark; seq++ { // past s.mark: seen above
				if stored := entries.Get(seqKey(seq)); stored != nil {
					if err := each(seqKey(seq), stored); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// The log of what stagings made visible while another was under way, which that one
// checks its entries against (recordedSince): visibleKey(n) → the n-th such staging's
// ranges, n counted in keyVisibleCount. It is emptied once no staging is under way.
const visiblePrefix = "visible\x00"

var keyVisibleCount = []byte("visible_count")

func visibleKey(n uint64) []byte { return binary.BigEndian.AppendUint64([]byte(visiblePrefix), n) }

// logVisible notes in the log the ranges a staging made visible, while another one is
// under way; with none under way, it empties the log.
func logVisible(tx *bolt.Tx, ranges []seqRange) error {
	meta := tx.Bucket(bucketMeta)
	under := false
	if err := eachStaging(tx, func([]byte, []seqRange) error { under = true; return nil }); err != nil {
		return err
	}
	if !under {
		var keys [][]byte
		c := meta.Cursor()
		for k, _ := c.Seek([]byte(visiblePrefix)); k != nil && bytes.HasPrefix(k, []byte(visiblePrefix)); k, _ = c.Next() {
			keys = append(keys, bytes.Clone(k))
		}
		for _, k := range keys {
			if err := meta.Delete(k); err != nil {
				return err
			}
		}
		return nil
	}
	if len(ranges) == 0 {
		return nil
	}
	n := visibleCount(tx) + 1
	if err := meta.Put(keyVisibleCount, binary.BigEndian.AppendUint64(nil, n)); err != nil {
		return err
	}
	return putJSON(meta, visibleKey(n), ranges)
}

// visibleCount is how many stagings the log has counted.
func visibleCount(tx *bolt.Tx) uint64 {
	if v := tx.Bucket(bucketMeta).Get(keyVisibleCount); len(v) == 8 {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}

// answerCalls makes the answers a staging deferred to visible calls, as Append would
// now, and notes in changed what became of each: answered, or a duplicate when the
// call was committed or answered meanwhile.
func answerCalls(a *appendTx, own *bolt.Bucket, changed map[string]Appended) error {
	answers := own.Bucket(bucketAnswers)
	if answers == nil {
		return nil
	}
	type deferred struct {
		seq  uint64
		kept string
	}
	var all []deferred
	answers.ForEach(func(seq, kept []byte) error {
		all = append(all, deferred{seqOf(seq), string(kept)})
		return nil
	})
	for _, d := range all {
		e, err := decodeEntry(a.entries.Get(seqKey(d.seq)))
		if err != nil {
			return fmt.Errorf("decode staged entry %d: %w", d.seq, err)
		}
		now, err := a.appended(Prepared{head: headOf(e), seq: d.seq})
		if err != nil {
			return err
		}
		// Two answers to one call: the one that answered it tells.
		if before, ok := changed[d.kept]; !ok || before.Duplicate {
			changed[d.kept] = now
		}
	}
	return own.DeleteBucket(bucketAnswers)
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

// check makes sure that what the staging stored is still there: another process drops
// a staging whose lock file it can take, and someone may have removed the file.
func (s *Staging) check(tx *bolt.Tx) error {
	if s.started && tx.Bucket(bucketMeta).Get(stagingKey(s.id)) == nil {
		return fmt.Errorf("%w (was %s removed?)", ErrStagingDropped, stagingLock(s.j, s.id))
	}
	return nil
}

// Close ends the staging. What it stored and Commit did not make visible is dropped:
// what its record in the journal names, whatever this process believes it stored. What
// Commit made visible is merged into the indexes, a chunk at a time; a merge that
// fails is left to the next staging, or gc: visible it is, merged or not.
func (s *Staging) Close() error {
	var err error
	switch {
	case s.started:
		err = s.j.dropStaging(s.id)
	case s.committed:
		s.j.mergeParts()
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

// dropAbandonedStagings drops what stagings of processes that died left behind, and
// merges the parts a process left unmerged: a journal without either is not written
// to.
func (j *Journal) dropAbandonedStagings() error {
	var ids []string
	parts := false
	err := j.view(func(tx *bolt.Tx) error {
		parts = hasParts(tx)
		return eachStaging(tx, func(key []byte, _ []seqRange) error {
			ids = append(ids, string(key[len(stagingPrefix):]))
			return nil
		})
	})
	if err != nil {
		return err
	}
	for _, id := range ids {
		if gone, err := abandoned(j, id); err != nil {
			return err
		} else if gone {
			if err := j.dropStaging(id); err != nil {
				return err
			}
		}
	}
	// A process killed before it staged anything left its lock file and no record.
	files, _ := filepath.Glob(stagingLock(j, "*"))
	for _, f := range files {
		id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "staging-"), ".lock")
		if !slices.Contains(ids, id) {
			if _, err := abandoned(j, id); err != nil {
				return err
			}
		}
	}
	if parts {
		return j.mergeParts()
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

// dropChunk bounds the entries one transaction of dropStaging deletes.
const dropChunk = 20000

// dropStaging deletes what staging id stored and its record, its entries dropChunk at
// a time: until its record is gone, readers pass its entries by.
func (j *Journal) dropStaging(id string) error {
	for {
		more := false
		err := j.update(func(tx *bolt.Tx) error {
			key := stagingKey(id)
			raw := tx.Bucket(bucketMeta).Get(key)
			if raw == nil {
				return nil // committed, or dropped by another process
			}
			ranges, err := decodeRanges(key, raw)
			if err != nil {
				return err
			}
			stagings := tx.Bucket(bucketStagings)
			if stagings.Bucket([]byte(id)) != nil {
				if err := stagings.DeleteBucket([]byte(id)); err != nil {
					return err
				}
			}
			entries := tx.Bucket(bucketEntries)
			for n := 0; len(ranges) > 0; n++ {
				r := &ranges[0]
				if n == dropChunk {
					more = true
					return putJSON(tx.Bucket(bucketMeta), key, ranges)
				}
				if err := entries.Delete(seqKey(r.From)); err != nil {
					return err
				}
				if r.From++; r.From > r.To || r.From == 0 {
					ranges = ranges[1:]
				}
			}
			if err := tx.Bucket(bucketMeta).Delete(key); err != nil {
				return err
			}
			return logVisible(tx, nil)
		})
		if err != nil || !more {
			return err
		}
	}
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
