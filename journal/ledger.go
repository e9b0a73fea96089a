package journal

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Committed is one commit a flush wrote, as the journal's ledger keeps it: the ledger
// is what this journal knows it committed, in the order it committed it, for agmem
// audit to hold the history against. It is kept whatever gc forgets.
type Committed struct {
	Commit       string    `json:"commit"`
	Batch        string    `json:"batch"`
	Session      string    `json:"session"`
	Observations int       `json:"observations"`
	Events       int       `json:"events"`
	At           time.Time `json:"at"` // when the journal learnt of it
	Signing      Signing   `json:"signing"`
}

// Signing is whether a commit was signed, and why not when it was to be.
type Signing struct {
	Signed bool   `json:"signed,omitempty"`
	Failed string `json:"failed,omitempty"` // why a commit that was to be signed is not
}

// appendLedger notes b's commit at the end of the ledger.
func appendLedger(tx *bolt.Tx, b *Batch, commit string, s Signing) error {
	lb := tx.Bucket(bucketLedger)
	seq, err := lb.NextSequence()
	if err != nil {
		return err
	}
	v, err := json.Marshal(Committed{Commit: commit, Batch: b.ID, Session: b.Session,
		Observations: b.Observations, Events: b.Events, At: time.Now().UTC(), Signing: s})
	if err != nil {
		return err
	}
	return lb.Put(binary.BigEndian.AppendUint64(nil, seq), v)
}

// Ledger is every commit the journal knows it committed, oldest first.
func (j *Journal) Ledger() ([]Committed, error) {
	var all []Committed
	err := j.view(func(tx *bolt.Tx) error {
		lb := tx.Bucket(bucketLedger)
		if lb == nil { // written by an agmem before the ledger, and not since
			return nil
		}
		return lb.ForEach(func(k, v []byte) error {
			var c Committed
			if err := json.Unmarshal(v, &c); err != nil {
				return fmt.Errorf("decode ledger entry %x: %w", k, err)
			}
			all = append(all, c)
			return nil
		})
	})
	return all, err
}

// LastCommitted is the last commit of the ledger, nil when there is none.
func (j *Journal) LastCommitted() (*Committed, error) {
	var last *Committed
	err := j.view(func(tx *bolt.Tx) error {
		lb := tx.Bucket(bucketLedger)
		if lb == nil {
			return nil
		}
		_, v := lb.Cursor().Last()
		if v == nil {
			return nil
		}
		last = &Committed{}
		return json.Unmarshal(v, last)
	})
	return last, err
}
