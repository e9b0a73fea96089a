package journal

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

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
	// Waiting are calls reported before their result that a flush leaves pending for
	// it (PrepareBatches), not counted in Observations: nothing to flush yet.
	Waiting int
}

// Empty is true when a flush would have nothing to do.
func (b Backlog) Empty() bool { return b.Observations+b.Events+b.Batches == 0 }

// Backlog counts what waits for a flush. It reads only the pending set and the first
// bytes of its entries, so it is cheap enough to ask every second.
func (j *Journal) Backlog() (Backlog, error) { return j.backlog(time.Now()) }

// backlog is Backlog at now.
func (j *Journal) backlog(now time.Time) (Backlog, error) {
	var b Backlog
	err := j.view(func(tx *bolt.Tx) error {
		entries := tx.Bucket(bucketEntries)
		scan := newWaitScan(now)
		type report struct {
			session string
			seq     uint64
		}
		var young []report
		c := indexOf(tx, bucketPending).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			i := bytes.IndexByte(k, 0)
			seq := k[i+1:]
			switch {
			case scan.see(string(k[:i]), binary.BigEndian.Uint64(seq), v):
				young = append(young, report{string(k[:i]), binary.BigEndian.Uint64(seq)})
			case holdsObservation(entries.Get(seq)):
				b.Observations++
			default:
				b.Events++
			}
		}
		for _, r := range young {
			if scan.waits(r.session, r.seq) {
				b.Waiting++
			} else {
				b.Observations++
			}
		}
		b.Batches = tx.Bucket(bucketBatches).Stats().KeyN
		return nil
	})
	return b, err
}
