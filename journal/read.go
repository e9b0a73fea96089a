package journal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	bolt "go.etcd.io/bbolt"

	"github.com/agmem/agmem/memory"
)

// Sessions lists every session the journal knows, most recent activity last.
func (j *Journal) Sessions() ([]SessionInfo, error) {
	var out []SessionInfo
	err := j.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketSessions).ForEach(func(_, v []byte) error {
			var s SessionInfo
			if err := json.Unmarshal(v, &s); err != nil {
				return fmt.Errorf("decode session: %w", err)
			}
			out = append(out, s)
			return nil
		})
	})
	sort.SliceStable(out, func(a, b int) bool { return out[a].Last.Before(out[b].Last) })
	return out, err
}

// LastFlush is the last flush that finished, or nil.
func (j *Journal) LastFlush() (*FlushInfo, error) {
	var info *FlushInfo
	err := j.view(func(tx *bolt.Tx) error {
		var f FlushInfo
		if getJSON(tx.Bucket(bucketMeta), keyLastFlush, &f) {
			info = &f
		}
		return nil
	})
	return info, err
}

// timelineChunk bounds how many entries one read transaction hands over: a slow reader
// (a replay piped into a pager) must not keep the journal from writers.
const timelineChunk = 1000

// Timeline calls fn with each entry of a session in time order. It reads in chunks, one
// short transaction each, and calls fn outside of them.
func (j *Journal) Timeline(session string, fn func(memory.Entry) error) error {
	return j.TimelineJSON(session, func(raw []byte) error {
		e, err := entryFrom(raw)
		if err != nil {
			return j.classify(fmt.Errorf("decode entry: %w", err))
		}
		return fn(e)
	})
}

// TimelineJSON is Timeline with each entry as JSON, the JSON of a memory.Entry as it
// was recorded, for readers that only pass it on. raw is fn's until it returns.
func (j *Journal) TimelineJSON(session string, fn func(raw []byte) error) error {
	prefix := sessionKey(session)
	after := prefix
	for {
		var chunk [][]byte
		err := j.view(func(tx *bolt.Tx) error {
			entries := tx.Bucket(bucketEntries)
			c := indexOf(tx, bucketTimeline).Cursor()
			k, _ := c.Seek(after)
			if bytes.Equal(k, after) {
				k, _ = c.Next()
			}
			for ; k != nil && bytes.HasPrefix(k, prefix) && len(chunk) < timelineChunk; k, _ = c.Next() {
				// Copied: bbolt's bytes are valid only inside the transaction.
				chunk = append(chunk, bytes.Clone(entries.Get(k[len(k)-8:])))
				after = bytes.Clone(k)
			}
			return nil
		})
		if err != nil {
			return err
		}
		// Decompressed out here, with the journal free for writers again.
		for _, stored := range chunk {
			raw, err := entryJSON(stored)
			if err != nil {
				return j.classify(fmt.Errorf("decode entry: %w", err))
			}
			if err := fn(raw); err != nil {
				return err
			}
		}
		if len(chunk) < timelineChunk {
			return nil
		}
	}
}

// Session is what the journal knows of one session; ok is false if it knows nothing.
func (j *Journal) Session(id string) (info SessionInfo, ok bool, err error) {
	err = j.view(func(tx *bolt.Tx) error {
		ok = getSession(tx.Bucket(bucketSessions), id, &info)
		return nil
	})
	return info, ok, err
}

// Since calls fn with each entry recorded after the entry numbered after (0: every
// entry), in the order recorded, and returns the number to give it the next time: a
// reader that keeps it reads only what is new then, and again what was passed over
// (and what came after it). A number lower than one given before means the journal was
// made anew. What gc left of a forgotten call (its id alone) is passed over, as is what
// a large record has only staged so far, until it is recorded.
func (j *Journal) Since(after uint64, fn func(memory.Entry) error) (last uint64, err error) {
	return j.SinceUnknown(after, nil, fn)
}

// SinceUnknown is Since for a reader that has read most entries elsewhere (the search
// index, in the commits a flush just wrote): an entry whose JSON known says it has
// already, as json.Marshal writes a memory.Entry, is passed over without being decoded.
// known's argument is the journal's or a buffer reused for the next entry: it is valid
// only during the call.
func (j *Journal) SinceUnknown(after uint64, known func(entryJSON []byte) bool, fn func(memory.Entry) error) (last uint64, err error) {
	unseen := uint64(0) // the first staged entry passed over
	// An entry known is passed over inside the read transaction, neither copied out
	// of it nor decompressed into a buffer of its own; one that does not read is
	// copied, to fail as Since fails it.
	var buf []byte
	isKnown := func(stored []byte) bool {
		raw, err := entryJSONIn(buf, stored)
		if err != nil {
			return false
		}
		if stored[0] != '{' { // raw is not stored's own bytes
			buf = raw
		}
		return known(raw)
	}
	for {
		var chunk [][]byte
		more := false
		err := j.view(func(tx *bolt.Tx) error {
			staged, err := stagedSeqs(tx)
			if err != nil {
				return err
			}
			c := tx.Bucket(bucketEntries).Cursor()
			if k, _ := c.Last(); k != nil {
				last = seqOf(k)
			}
			// Every entry looked at counts toward a transaction's bound, those passed
			// over too: the journal's lock, which hooks wait for, is held for a chunk.
			n := 0
			for k, v := c.Seek(seqKey(after + 1)); k != nil; k, v = c.Next() {
				if n == timelineChunk {
					more = true
					break
				}
				n++
				after = seqOf(k)
				switch {
				case !staged(k) && known != nil && isKnown(v): // passed over
				case !staged(k):
					chunk = append(chunk, bytes.Clone(v))
				case unseen == 0:
					unseen = after
				}
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
		for _, stored := range chunk {
			e, err := decodeEntry(stored)
			if err != nil {
				return 0, j.classify(fmt.Errorf("decode entry: %w", err))
			}
			if e.Observation != nil && e.Observation.ToolName == "" {
				continue // a forgotten call's id
			}
			if err := fn(e); err != nil {
				return 0, err
			}
		}
		if !more {
			if unseen != 0 {
				return unseen - 1, nil
			}
			return last, nil
		}
	}
}

// Tip is the journal's birth and the number of its last entry: what a reader that keeps
// up with the journal (the search index) compares with what it read last, to learn
// that nothing was recorded since.
func (j *Journal) Tip() (birth string, last uint64, err error) {
	err = j.view(func(tx *bolt.Tx) error {
		birth = string(tx.Bucket(bucketMeta).Get(keyBirth))
		if k, _ := tx.Bucket(bucketEntries).Cursor().Last(); k != nil {
			last = seqOf(k)
		}
		return nil
	})
	return birth, last, err
}

// Entries calls fn with each entry of ids the journal holds, in the order of ids; an id
// it does not hold is passed over.
func (j *Journal) Entries(ids []string, fn func(memory.Entry) error) error {
	var seqs [][]byte
	err := j.view(func(tx *bolt.Tx) error {
		b := indexOf(tx, bucketIDs)
		for _, id := range ids {
			if seq := b.Get([]byte(id)); seq != nil {
				seqs = append(seqs, bytes.Clone(seq))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return j.eachStored(seqs, fn)
}

// eachStored calls fn with the entries stored under seqs, read timelineChunk at a time.
func (j *Journal) eachStored(seqs [][]byte, fn func(memory.Entry) error) error {
	for len(seqs) > 0 {
		n := min(len(seqs), timelineChunk)
		chunk := make([][]byte, 0, n)
		err := j.view(func(tx *bolt.Tx) error {
			entries := tx.Bucket(bucketEntries)
			for _, seq := range seqs[:n] {
				if v := entries.Get(seq); v != nil {
					chunk = append(chunk, bytes.Clone(v))
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		seqs = seqs[n:]
		for _, stored := range chunk {
			e, err := decodeEntry(stored)
			if err != nil {
				return j.classify(fmt.Errorf("decode entry: %w", err))
			}
			if err := fn(e); err != nil {
				return err
			}
		}
	}
	return nil
}
