package journal

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/agmem/agmem/failpoint"
	"github.com/agmem/agmem/memory"
)

// SessionInfo is what the journal knows of one session.
type SessionInfo struct {
	ID            string              `json:"id"`
	First         time.Time           `json:"first"`
	Last          time.Time           `json:"last"`
	Observations  int                 `json:"observations"`
	Events        int                 `json:"events"`
	Pending       int                 `json:"pending"` // observations not yet in a commit
	PendingEvents int                 `json:"pending_events"`
	PendingByType map[memory.Type]int `json:"pending_by_type,omitempty"`
	Commits       int                 `json:"commits"`
	LastCommit    string              `json:"last_commit,omitempty"`
	Source        string              `json:"source,omitempty"`
}

// Appended is what became of one entry given to Append.
type Appended struct {
	ID        string // the entry's id; for a duplicate, the id of the entry kept
	Duplicate bool   // already recorded (same id, or same session and tool_use_id): kept once
}

type openSession struct {
	ID   string    `json:"id"`
	Last time.Time `json:"last"`
}

// Append records entries in one transaction: all of them are durable when it returns,
// or none is. Entries must carry ids. An entry without a session joins the open session,
// which is replaced by a new one after idleGap without activity, and after a SessionStart
// or SessionEnd event; the session chosen is written back into the entry.
func (j *Journal) Append(entries []memory.Entry, idleGap time.Duration, now time.Time) ([]Appended, error) {
	var out []Appended
	err := j.update(func(tx *bolt.Tx) error {
		var err error
		out, err = appendAll(tx, entries, idleGap, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// appendAll is the body of Append's transaction.
func appendAll(tx *bolt.Tx, entries []memory.Entry, idleGap time.Duration, now time.Time) ([]Appended, error) {
	out := make([]Appended, len(entries))
	var open *openSession // as this transaction leaves it; nil while untouched
	closed := false       // a session boundary passed: the next entry without one starts anew
	for i, e := range entries {
		var event string
		if e.Event != nil {
			event = e.Event.Name
		}
		if event == "SessionStart" {
			open, closed = nil, true
		}
		// An entry that holds neither kind has no session to read; Validate refuses it.
		if (e.Observation != nil || e.Event != nil) && e.Session() == "" {
			if open == nil {
				open = currentSession(tx, idleGap, now, closed)
			}
			e.SetSession(open.ID)
		}
		if event == "SessionEnd" {
			open, closed = nil, true
		}
		if err := e.Validate(); err != nil {
			return nil, fmt.Errorf("entry %d: %w", i+1, err)
		}
		kept, err := appendEntry(tx, e)
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", i+1, err)
		}
		out[i] = Appended{ID: e.ID()}
		if kept != "" {
			out[i] = Appended{ID: kept, Duplicate: true}
		}
		if i == len(entries)/2 {
			failpoint.Hit("append-midway") // inside the transaction: bbolt must drop it whole
		}
	}
	meta := tx.Bucket(bucketMeta)
	switch {
	case open != nil:
		open.Last = now
		return out, putJSON(meta, keyOpenSession, open)
	case closed:
		return out, meta.Delete(keyOpenSession)
	}
	return out, nil
}

// currentSession is the open session, or a new one if it was idle for idleGap or fresh
// is set.
func currentSession(tx *bolt.Tx, idleGap time.Duration, now time.Time, fresh bool) *openSession {
	var s openSession
	if !fresh && getJSON(tx.Bucket(bucketMeta), keyOpenSession, &s) && s.ID != "" && now.Sub(s.Last) < idleGap {
		return &s
	}
	return &openSession{ID: memory.NewID(now)}
}

// appendEntry stores e, or, if it was recorded before, returns the id of the entry kept.
func appendEntry(tx *bolt.Tx, e memory.Entry) (kept string, err error) {
	ids, calls := tx.Bucket(bucketIDs), tx.Bucket(bucketCalls)
	id, session := []byte(e.ID()), e.Session()
	if ids.Get(id) != nil {
		return e.ID(), nil
	}
	var callKey []byte
	if o := e.Observation; o != nil && o.ToolUseID != "" {
		callKey = sessionKey(session, []byte(o.ToolUseID))
		if seq := calls.Get(callKey); seq != nil {
			var earlier memory.Entry
			if err := json.Unmarshal(tx.Bucket(bucketEntries).Get(seq), &earlier); err != nil {
				return "", fmt.Errorf("decode entry recorded for %s: %w", o.ToolUseID, err)
			}
			return earlier.ID(), nil
		}
	}

	entries := tx.Bucket(bucketEntries)
	seq, err := entries.NextSequence()
	if err != nil {
		return "", err
	}
	value, err := json.Marshal(e)
	if err != nil {
		return "", fmt.Errorf("encode %s: %w", e.ID(), err)
	}
	k := seqKey(seq)
	for _, put := range []struct {
		b    *bolt.Bucket
		k, v []byte
	}{
		{entries, k, value},
		{ids, id, k},
		{tx.Bucket(bucketTimeline), timelineKey(session, e.Time(), seq), nil},
		{tx.Bucket(bucketPending), sessionKey(session, k), nil},
	} {
		if err := put.b.Put(put.k, put.v); err != nil {
			return "", err
		}
	}
	if callKey != nil {
		if err := calls.Put(callKey, k); err != nil {
			return "", err
		}
	}
	return "", updateSession(tx, session, func(s *SessionInfo) {
		t := e.Time()
		if s.First.IsZero() || t.Before(s.First) {
			s.First = t
		}
		if t.After(s.Last) {
			s.Last = t
		}
		if o := e.Observation; o != nil {
			s.Observations++
			s.Pending++
			s.PendingByType[o.MemoryType]++
			if s.Source == "" {
				s.Source = o.Source
			}
		} else {
			s.Events++
			s.PendingEvents++
			if s.Source == "" {
				s.Source = e.Event.Source
			}
		}
	})
}

func updateSession(tx *bolt.Tx, id string, change func(*SessionInfo)) error {
	b := tx.Bucket(bucketSessions)
	s := SessionInfo{ID: id}
	getJSON(b, []byte(id), &s)
	if s.PendingByType == nil {
		s.PendingByType = map[memory.Type]int{}
	}
	change(&s)
	for t, n := range s.PendingByType {
		if n <= 0 {
			delete(s.PendingByType, t)
		}
	}
	return putJSON(b, []byte(id), &s)
}

func getJSON(b *bolt.Bucket, k []byte, v any) bool {
	raw := b.Get(k)
	return raw != nil && json.Unmarshal(raw, v) == nil
}

func putJSON(b *bolt.Bucket, k []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put(k, raw)
}
