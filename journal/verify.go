package journal

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Inventory is where every entry the journal holds stands, read in one transaction for
// a reader that compares it with git (agmem verify).
type Inventory struct {
	Entries []EntryState
	Batches []*Batch // unfinished, oldest first, without their entries
}

// EntryState is one entry and where it stands: pending, in an unfinished batch, or
// (neither) committed and finished.
type EntryState struct {
	ID      string
	Session string
	Event   bool
	Pending bool
	Batch   string // the unfinished batch that holds it
}

// Inventory reads where every entry stands. The entries of sessions gc forgot are not
// there (git holds them), nor is what gc left of a forgotten call: its id alone.
func (j *Journal) Inventory() (*Inventory, error) {
	inv := &Inventory{}
	err := j.view(func(tx *bolt.Tx) error {
		inBatch := map[uint64]string{}
		if err := tx.Bucket(bucketBatches).ForEach(func(_, v []byte) error {
			b := &Batch{}
			if err := json.Unmarshal(v, b); err != nil {
				return fmt.Errorf("decode batch: %w", err)
			}
			for _, seq := range b.Seqs {
				inBatch[seq] = b.ID
			}
			inv.Batches = append(inv.Batches, b)
			return nil
		}); err != nil {
			return err
		}
		pending := map[uint64]bool{}
		if err := indexOf(tx, bucketPending).ForEach(func(k, _ []byte) error {
			pending[binary.BigEndian.Uint64(k[bytes.IndexByte(k, 0)+1:])] = true
			return nil
		}); err != nil {
			return err
		}
		staged, err := stagedSeqs(tx)
		if err != nil {
			return err
		}
		return tx.Bucket(bucketEntries).ForEach(func(k, v []byte) error {
			if staged(k) { // not recorded yet: a large record stores it in parts
				return nil
			}
			raw, err := entryJSON(v)
			if err != nil {
				return fmt.Errorf("decode entry %x: %w", k, err)
			}
			var e entryHead
			if err := json.Unmarshal(raw, &e); err != nil {
				return fmt.Errorf("decode entry %x: %w", k, err)
			}
			id, session, event := e.identity()
			if session == "" {
				return nil
			}
			seq := binary.BigEndian.Uint64(k)
			inv.Entries = append(inv.Entries, EntryState{ID: id, Session: session, Event: event,
				Pending: pending[seq], Batch: inBatch[seq]})
			return nil
		})
	})
	return inv, err
}

// entryHead is the part of a stored entry that names it.
type entryHead struct {
	Observation *struct {
		ID      string `json:"id"`
		Session string `json:"session_id"`
	} `json:"observation"`
	Event *struct {
		ID      string `json:"id"`
		Session string `json:"session_id"`
	} `json:"event"`
}

func (e entryHead) identity() (id, session string, event bool) {
	switch {
	case e.Observation != nil:
		return e.Observation.ID, e.Observation.Session, false
	case e.Event != nil:
		return e.Event.ID, e.Event.Session, true
	}
	return "", "", false
}

// Requeue puts entries whose commit is gone (the branch was moved past it by hand) back
// into the pending set, so that the next flush commits them again; it returns how many
// it put back. An entry already pending is left alone. An entry in a batch marked
// committed takes its whole batch along: the batch is dropped and all its entries are
// pending again. The caller holds the writer lock (flush.Lock) and has made sure no
// commit reachable from the branch holds the entries: else they would be committed twice.
func (j *Journal) Requeue(ids []string) (int, error) {
	n := 0
	err := j.update(func(tx *bolt.Tx) error {
		batches := map[uint64]*Batch{}
		if err := tx.Bucket(bucketBatches).ForEach(func(_, v []byte) error {
			b := &Batch{}
			if err := json.Unmarshal(v, b); err != nil {
				return fmt.Errorf("decode batch: %w", err)
			}
			for _, seq := range b.Seqs {
				batches[seq] = b
			}
			return nil
		}); err != nil {
			return err
		}
		var seqs []uint64
		dropped := map[string]bool{}
		for _, id := range ids {
			raw := indexOf(tx, bucketIDs).Get([]byte(id))
			if raw == nil {
				return fmt.Errorf("requeue %s: no such entry in the journal", id)
			}
			seq := binary.BigEndian.Uint64(raw)
			b := batches[seq]
			switch {
			case b == nil:
				seqs = append(seqs, seq)
			case b.Commit == "":
				return fmt.Errorf("requeue %s: batch %s is not committed yet; a flush resumes it", id, b.ID)
			case !dropped[b.ID]:
				dropped[b.ID] = true
				seqs = append(seqs, b.Seqs...)
				if err := tx.Bucket(bucketBatches).Delete([]byte(b.ID)); err != nil {
					return err
				}
			}
		}
		sessions := sessionUpdates{}
		pending := indexOf(tx, bucketPending)
		for _, seq := range seqs {
			e, err := decodeEntry(tx.Bucket(bucketEntries).Get(seqKey(seq)))
			if err == nil {
				err = e.Validate() // a stub gc left has no session: its content is gone
			}
			if err != nil {
				return fmt.Errorf("requeue entry %d: %w", seq, err)
			}
			k := sessionKey(e.Session(), seqKey(seq))
			if pending.Get(k) != nil {
				continue
			}
			if err := pending.Put(k, pendingValue(headOf(e))); err != nil {
				return err
			}
			s := sessions.get(tx, e.Session())
			if o := e.Observation; o != nil {
				s.Pending++
				s.PendingByType[o.MemoryType]++
			} else {
				s.PendingEvents++
			}
			n++
		}
		return sessions.write(tx)
	})
	return n, err
}

// Uncommitted are the ids of a session's entries no commit holds yet: pending, or in a
// batch whose commit is not yet marked. It reads only that session's keys.
func (j *Journal) Uncommitted(session string) (map[string]bool, error) {
	ids := map[string]bool{}
	err := j.view(func(tx *bolt.Tx) error {
		var seqs [][]byte
		prefix := append([]byte(session), 0)
		c := indexOf(tx, bucketPending).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			seqs = append(seqs, k[len(prefix):])
		}
		if err := tx.Bucket(bucketBatches).ForEach(func(_, v []byte) error {
			b := &Batch{}
			if err := json.Unmarshal(v, b); err != nil {
				return fmt.Errorf("decode batch: %w", err)
			}
			if b.Session == session && b.Commit == "" {
				for _, seq := range b.Seqs {
					seqs = append(seqs, binary.BigEndian.AppendUint64(nil, seq))
				}
			}
			return nil
		}); err != nil {
			return err
		}
		entries := tx.Bucket(bucketEntries)
		for _, seq := range seqs {
			v := entries.Get(seq)
			if v == nil {
				continue // agmem verify tells of a key naming no entry
			}
			raw, err := entryJSON(v)
			if err != nil {
				return fmt.Errorf("decode entry %x: %w", seq, err)
			}
			var e entryHead
			if err := json.Unmarshal(raw, &e); err != nil {
				return fmt.Errorf("decode entry %x: %w", seq, err)
			}
			if id, _, _ := e.identity(); id != "" {
				ids[id] = true
			}
		}
		return nil
	})
	return ids, err
}
