package journal

import (
	"bytes"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// WatchMark is how far `agmem daemon` has read a file it follows. It is written in the
// same transaction as the entries read up to it, so that a line is recorded exactly once
// whatever moment the daemon dies at.
type WatchMark struct {
	Offset int64 `json:"offset"`
	// File tells the file the offset is in from another one later found at the same
	// path, in the watcher's own terms; the journal does not read it.
	File string `json:"file,omitempty"`
}

// WatchMarks returns the mark of every file followed so far, by path.
func (j *Journal) WatchMarks() (map[string]WatchMark, error) {
	marks := map[string]WatchMark{}
	err := j.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketWatches).ForEach(func(k, v []byte) error {
			var m WatchMark
			if err := json.Unmarshal(v, &m); err != nil {
				return fmt.Errorf("decode watch mark of %s: %w", k, err)
			}
			marks[string(k)] = m
			return nil
		})
	})
	return marks, err
}

// Backlog is what waits for a flush.
type Backlog struct {
	Observations, Events int // pending, in no batch yet
	Batches              int // batches a flush planned and did not finish
}

// Empty is true when a flush would have nothing to do.
func (b Backlog) Empty() bool { return b.Observations+b.Events+b.Batches == 0 }

// Backlog counts what waits for a flush. It reads only the pending set's keys and the
// first bytes of their entries, so it is cheap enough to ask every second.
func (j *Journal) Backlog() (Backlog, error) {
	var b Backlog
	err := j.view(func(tx *bolt.Tx) error {
		entries := tx.Bucket(bucketEntries)
		c := tx.Bucket(bucketPending).Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			seq := k[bytes.IndexByte(k, 0)+1:]
			if holdsObservation(entries.Get(seq)) {
				b.Observations++
			} else {
				b.Events++
			}
		}
		b.Batches = tx.Bucket(bucketBatches).Stats().KeyN
		return nil
	})
	return b, err
}
