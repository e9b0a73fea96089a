package journal

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/agmem/agmem/memory"
)

// Batch is the intent of one commit: the pending entries of one session, taken out of
// the pending set together, planned on the branch tip Base.
type Batch struct {
	ID           string              `json:"id"`
	Session      string              `json:"session"`
	Base         string              `json:"base,omitempty"` // branch tip when planned; "" for an unborn branch
	Created      time.Time           `json:"created"`
	Seqs         []uint64            `json:"seqs"`
	Observations int                 `json:"observations"`
	Events       int                 `json:"events"`
	ByType       map[memory.Type]int `json:"by_type,omitempty"`
	Commit       string              `json:"commit,omitempty"` // set once the commit is on the branch

	Entries []memory.Entry `json:"-"` // loaded with the batch, in timeline order
	Resumed bool           `json:"-"` // left behind by an earlier flush

	stored    [][]byte // its entries as stored, copied out of a transaction to be decoded after it
	uncounted []int    // where in Seqs the entries are that the pending set did not count
}

// FlushInfo describes the last flush that finished.
type FlushInfo struct {
	At      time.Time `json:"at"`
	Commits []string  `json:"commits"`
}

// PlanBatches takes every pending entry out of the pending set and writes it into a
// batch intent planned on base, in one transaction: one batch per session, or more
// where a session holds more than maxBatch entries (0: no bound), each of at most
// maxBatch, in the order they were recorded. It returns the new batches' ids, oldest
// first; Leftovers loads them, a bounded part at a time, so that no flush holds a big
// session whole.
func (j *Journal) PlanBatches(base string, now time.Time, maxBatch int) ([]string, error) {
	var ids []string
	err := j.update(func(tx *bolt.Tx) error {
		var fresh []*Batch
		var waiting []waitingCall
		scan := newWaitScan(now)
		if err := indexOf(tx, bucketPending).ForEach(func(k, v []byte) error {
			i := bytes.IndexByte(k, 0)
			session, seq := string(k[:i]), binary.BigEndian.Uint64(k[i+1:])
			if n := len(fresh); n == 0 || fresh[n-1].Session != session || maxBatch > 0 && len(fresh[n-1].Seqs) >= maxBatch {
				fresh = append(fresh, &Batch{ID: memory.NewID(now), Session: session, Base: base,
					Created: now, ByType: map[memory.Type]int{}})
			}
			b := fresh[len(fresh)-1]
			b.Seqs = append(b.Seqs, seq)
			if !b.countPending(v) {
				b.uncounted = append(b.uncounted, len(b.Seqs)-1)
			}
			if scan.see(session, seq, v) {
				waiting = append(waiting, waitingCall{b, seq, bytes.Clone(k), bytes.Clone(v)})
			}
			return nil
		}); err != nil {
			return err
		}
		held := holdBack(waiting, scan)
		fresh = slices.DeleteFunc(fresh, func(b *Batch) bool { return len(b.Seqs) == 0 })
		if len(fresh) == 0 {
			return nil
		}
		// Every pending entry is in a batch now: the set is dropped whole, a page at a
		// time, where deleting it key by key was a third of this transaction, which
		// holds the lock every record waits for.
		pending, err := dropIndex(tx, bucketPending)
		if err != nil {
			return err
		}
		for _, w := range held {
			if err := pending.Put(w.key, w.value); err != nil {
				return err
			}
		}
		bb := tx.Bucket(bucketBatches)
		for _, b := range fresh {
			if len(b.uncounted) > 0 {
				if err := copyStored(tx, b); err != nil {
					return err
				}
				if err := b.count(); err != nil {
					return err
				}
				b.stored = nil
			}
			if err := putJSON(bb, []byte(b.ID), b); err != nil {
				return err
			}
		}
		for _, b := range fresh {
			ids = append(ids, b.ID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// noResultWait is how long a flush leaves a call the agent reported before its result
// (memory.Observation.NoResult) pending, waiting for the result, unless an event after it
// (Stop, SessionEnd) says none will come: committed, the call would keep its "no result"
// when the result came.
const noResultWait = time.Hour

// waitScan tells, of the pending set walked in key order (each session's entries in the
// order they came), which calls reported before their result may still get it: young
// ones, with no ending event of their session after them. The flush leaves those
// pending, and the backlog does not count them.
type waitScan struct {
	now   time.Time
	ended map[string]uint64 // session -> the seq of its last ending event
}

func newWaitScan(now time.Time) *waitScan { return &waitScan{now: now, ended: map[string]uint64{}} }

// see takes in one pending entry (its pendingValue v) and says whether it is a young
// report, which may wait: whether it does, waits tells once the walk is over.
func (w *waitScan) see(session string, seq uint64, v []byte) bool {
	switch {
	case len(v) == 0: // pending from before pending values said anything
	case v[0] == tagEnding:
		w.ended[session] = seq
	case v[0] == tagNoResult && len(v) >= 9:
		return w.now.Sub(time.Unix(0, int64(binary.BigEndian.Uint64(v[1:9])))) < noResultWait
	}
	return false
}

// waits says whether the young report seq of session still waits for its result.
func (w *waitScan) waits(session string, seq uint64) bool { return w.ended[session] < seq }

// waitingCall is a call reported before its result, in a new batch.
type waitingCall struct {
	batch      *Batch
	seq        uint64
	key, value []byte // in the pending set
}

// holdBack takes out of their batches the calls still waiting for their results, and
// returns them, to be left in the pending set.
func holdBack(waiting []waitingCall, scan *waitScan) []waitingCall {
	var held []waitingCall
	for _, w := range waiting {
		if !scan.waits(w.batch.Session, w.seq) {
			continue
		}
		b := w.batch
		i := slices.Index(b.Seqs, w.seq)
		b.Seqs = slices.Delete(b.Seqs, i, i+1)
		b.Observations--
		b.ByType[memory.Type(w.value[9:])]--
		if b.ByType[memory.Type(w.value[9:])] == 0 {
			delete(b.ByType, memory.Type(w.value[9:]))
		}
		for j, u := range b.uncounted { // positions after it move up one
			if u > i {
				b.uncounted[j]--
			}
		}
		held = append(held, w)
	}
	return held
}

// countPending tallies an entry of a new batch by what the pending set holds for it
// (pendingValue), and says false if that tells nothing: an entry pending from before,
// which count reads.
func (b *Batch) countPending(v []byte) bool {
	switch {
	case len(v) == 0:
		return false
	case v[0] == tagEvent || v[0] == tagEnding:
		b.Events++
	case v[0] == tagNoResult && len(v) >= 9:
		b.Observations++
		b.ByType[memory.Type(v[9:])]++
	case v[0] == tagObservation:
		b.Observations++
		b.ByType[memory.Type(v[1:])]++
	default:
		return false
	}
	return true
}

// count tallies the entries of a new batch that countPending could not, reading of each
// stored entry only its kind and memory type: decoding them whole waits until the
// journal is let go. An entry damaged where count does not read is found then, with its
// batch planned: the flush fails on it as it fails on any batch left behind with such
// an entry.
func (b *Batch) count() error {
	for _, i := range b.uncounted {
		raw, err := entryJSON(b.stored[i])
		if err != nil {
			return fmt.Errorf("batch %s: entry %d: %w", b.ID, b.Seqs[i], err)
		}
		var kind struct {
			Observation *struct {
				MemoryType memory.Type `json:"memory_type"`
			} `json:"observation"`
			Event *struct{} `json:"event"`
		}
		if err := json.Unmarshal(raw, &kind); err != nil {
			return fmt.Errorf("batch %s: decode entry %d: %w", b.ID, b.Seqs[i], err)
		}
		if (kind.Observation == nil) == (kind.Event == nil) {
			return fmt.Errorf("batch %s: entry %d: %w", b.ID, b.Seqs[i], damage("an entry holds no observation or event, or both"))
		}
		if kind.Observation != nil {
			b.Observations++
			b.ByType[kind.Observation.MemoryType]++
		} else {
			b.Events++
		}
	}
	b.uncounted = nil
	return nil
}

// Leftovers returns the oldest of the batches not finished yet, with their entries:
// at most maxBatches of them, holding at most maxEntries entries together (always one,
// however big). It plans nothing: a flush works the unfinished batches off in bounded
// parts, those an earlier flush left behind before it takes new entries out of the
// pending set, so that flushes killed again and again neither pile up batches nor start
// on all of them each time, and no flush holds more than a part in memory.
func (j *Journal) Leftovers(maxBatches, maxEntries int) ([]*Batch, error) {
	var batches []*Batch
	err := j.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketBatches).Cursor()
		entries := 0
		for k, v := c.First(); k != nil && len(batches) < maxBatches; k, v = c.Next() {
			b := &Batch{Resumed: true}
			if err := json.Unmarshal(v, b); err != nil {
				return fmt.Errorf("decode batch: %w", err)
			}
			if entries += len(b.Seqs); len(batches) > 0 && entries > maxEntries {
				break
			}
			if err := copyStored(tx, b); err != nil {
				return err
			}
			batches = append(batches, b)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return batches, j.classify(decodeStored(batches))
}

// copyStored copies a batch's entries as stored out of the transaction. Decoding them
// is most of the work of loading a batch, and is done once the journal, which every
// record waits for, is let go: a batch's entries never change.
func copyStored(tx *bolt.Tx, b *Batch) error {
	// A batch's seqs ascend, mostly one after another: a cursor steps to the next
	// where a Get would search the tree from its root again.
	c := tx.Bucket(bucketEntries).Cursor()
	b.stored = make([][]byte, len(b.Seqs))
	for i, seq := range b.Seqs {
		want := seqKey(seq)
		var k, raw []byte
		if i > 0 {
			k, raw = c.Next()
		}
		if !bytes.Equal(k, want) {
			k, raw = c.Seek(want)
		}
		if !bytes.Equal(k, want) {
			return fmt.Errorf("batch %s: entry %d is missing from the journal", b.ID, seq)
		}
		b.stored[i] = bytes.Clone(raw)
	}
	return nil
}

// decodeStored decodes each batch's copied entries, in timeline order.
func decodeStored(batches []*Batch) error {
	for _, b := range batches {
		b.Entries = make([]memory.Entry, 0, len(b.stored))
		for i, raw := range b.stored {
			e, err := decodeEntry(raw)
			if err != nil {
				return fmt.Errorf("batch %s: decode entry %d: %w", b.ID, b.Seqs[i], err)
			}
			b.Entries = append(b.Entries, e)
			b.stored[i] = nil // not held beside its decoded entry
		}
		b.stored = nil
		sort.SliceStable(b.Entries, func(x, y int) bool { return b.Entries[x].Time().Before(b.Entries[y].Time()) })
	}
	return nil
}

// MarkCommitted records that batch b is in the commit named commit, signed or not as s
// says, and notes the commit in the ledger. From then on its entries count as
// committed, whatever happens to the worktree.
func (j *Journal) MarkCommitted(b *Batch, commit string, s Signing) error {
	return j.update(func(tx *bolt.Tx) error {
		bb := tx.Bucket(bucketBatches)
		var stored Batch
		if !getJSON(bb, []byte(b.ID), &stored) {
			return fmt.Errorf("batch %s is not in the journal", b.ID)
		}
		if stored.Commit != "" {
			return nil // an earlier flush already marked it
		}
		stored.Commit = commit
		b.Commit = commit
		if err := putJSON(bb, []byte(b.ID), &stored); err != nil {
			return err
		}
		if err := appendLedger(tx, &stored, commit, s); err != nil {
			return err
		}
		return updateSession(tx, b.Session, func(s *SessionInfo) {
			s.Pending -= stored.Observations
			s.PendingEvents -= stored.Events
			for t, n := range stored.ByType {
				s.PendingByType[t] -= n
			}
			s.Commits++
			s.LastCommit = commit
		})
	})
}

// Finish forgets batches whose commits are on the branch and in the worktree, and notes
// the flush as the last one.
func (j *Journal) Finish(batches []*Batch, now time.Time) error {
	return j.update(func(tx *bolt.Tx) error {
		bb := tx.Bucket(bucketBatches)
		info := FlushInfo{At: now}
		for _, b := range batches {
			if b.Commit == "" {
				return fmt.Errorf("batch %s is not committed yet", b.ID)
			}
			if err := bb.Delete([]byte(b.ID)); err != nil {
				return err
			}
			info.Commits = append(info.Commits, b.Commit)
		}
		return putJSON(tx.Bucket(bucketMeta), keyLastFlush, &info)
	})
}

// Unfinished are the ids of the batches no flush has finished, oldest first: their
// commits may be on the branch already, before the ledger names them.
func (j *Journal) Unfinished() ([]string, error) {
	var ids []string
	err := j.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketBatches).ForEach(func(k, _ []byte) error {
			ids = append(ids, string(k))
			return nil
		})
	})
	return ids, err
}
