package journal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/agmem/agmem/memory"
)

// Forgotten is what Forget dropped.
type Forgotten struct {
	Sessions int `json:"sessions"`
	Entries  int `json:"entries"`
}

var keyLastGC = []byte("last_gc")

// forgottenKey marks a session Forget dropped: if it is used again, the journal holds
// only its new part, and readers must add what git holds of it.
func forgottenKey(session string) []byte { return append([]byte("forgotten\x00"), session...) }

// WasForgotten says whether Forget once dropped the session: what the journal holds
// of it then is only what came after.
func (j *Journal) WasForgotten(session string) (bool, error) {
	var forgotten bool
	err := j.view(func(tx *bolt.Tx) error {
		forgotten = tx.Bucket(bucketMeta).Get(forgottenKey(session)) != nil
		return nil
	})
	return forgotten, err
}

// Forget drops the sessions that are wholly committed and whose last entry is older
// than cutoff: their entries, their timeline and what the journal knows of them, which
// git holds from then on (replay and sessions read it there). A session is forgotten
// whole or not at all, so that it is always read from one place; never one with an
// entry pending or in a batch, nor the open session.
//
// What recognises an entry recorded again stays: its id, and for a call its session and
// tool_use_id, pointing at a stub that holds only the id. So recording or importing it
// again, after any gc, still keeps one observation.
func (j *Journal) Forget(cutoff time.Time) (Forgotten, error) {
	var f Forgotten
	for {
		more := false
		err := j.update(func(tx *bolt.Tx) error {
			busy, err := busySessions(tx)
			if err != nil {
				return err
			}
			var old []string
			err = tx.Bucket(bucketSessions).ForEach(func(k, v []byte) error {
				var s SessionInfo
				if err := json.Unmarshal(v, &s); err != nil {
					return fmt.Errorf("decode session %s: %w", k, err)
				}
				if s.Last.Before(cutoff) && !busy[s.ID] {
					old = append(old, string(k))
				}
				return nil
			})
			if err != nil {
				return err
			}
			entries := 0
			for i, session := range old {
				if entries >= forgetChunk {
					more = i < len(old)
					break
				}
				n, err := forgetSession(tx, session)
				if err != nil {
					return fmt.Errorf("forget session %s: %w", session, err)
				}
				if err := tx.Bucket(bucketMeta).Put(forgottenKey(session), nil); err != nil {
					return err
				}
				f.Sessions++
				f.Entries += n
				entries += n
			}
			return nil
		})
		if err != nil || !more {
			return f, err
		}
	}
}

// forgetChunk is about how many entries one of Forget's transactions drops: the
// journal is free for records between them, and a record waits a transaction, not a
// gc (100,000 entries took 2.6 s in one).
const forgetChunk = 5000

// busySessions are the sessions that must stay: the open one, and those with an entry
// pending or in a batch.
func busySessions(tx *bolt.Tx) (map[string]bool, error) {
	busy := map[string]bool{}
	var open openSession
	if getJSON(tx.Bucket(bucketMeta), keyOpenSession, &open) {
		busy[open.ID] = true
	}
	c := indexOf(tx, bucketPending).Cursor()
	for k, _ := c.First(); k != nil; {
		session := k[:bytes.IndexByte(k, 0)]
		busy[string(session)] = true
		k, _ = c.Seek(append(bytes.Clone(session), 1)) // past this session's keys
	}
	err := tx.Bucket(bucketBatches).ForEach(func(_, v []byte) error {
		var b Batch
		if err := json.Unmarshal(v, &b); err != nil {
			return fmt.Errorf("decode batch: %w", err)
		}
		busy[b.Session] = true
		return nil
	})
	return busy, err
}

// forgetSession drops one session's entries, timeline and info, and returns how many
// entries it dropped.
func forgetSession(tx *bolt.Tx, session string) (int, error) {
	entries, timeline := tx.Bucket(bucketEntries), indexOf(tx, bucketTimeline)
	prefix := sessionKey(session)
	var keys [][]byte
	c := timeline.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		keys = append(keys, bytes.Clone(k))
	}
	for _, k := range keys {
		seq := k[len(k)-8:]
		e, err := decodeEntry(entries.Get(seq))
		if err != nil {
			return 0, fmt.Errorf("decode entry %x: %w", seq, err)
		}
		// The id (and a call's tool_use_id) stays indexed, so that recording the entry
		// again keeps it once; the stub keeps every index pointing at an entry.
		if err = entries.Put(seq, stub(e)); err == nil {
			err = timeline.Delete(k)
		}
		if err != nil {
			return 0, err
		}
	}
	return len(keys), tx.Bucket(bucketSessions).Delete([]byte(session))
}

// stub is what stays of a forgotten entry: its kind and id, enough for a duplicate to
// name the entry kept.
func stub(e memory.Entry) []byte {
	quoted, _ := json.Marshal(e.ID())
	kind := `{"event":{"id":`
	if e.Observation != nil {
		kind = `{"observation":{"id":`
	}
	return append(append([]byte(kind), quoted...), "}}"...)
}

// GCInfo describes the last garbage collection.
type GCInfo struct {
	At        time.Time `json:"at"`
	Forgotten Forgotten `json:"forgotten"`
}

// NoteGC records a garbage collection as the last one.
func (j *Journal) NoteGC(info GCInfo) error {
	return j.update(func(tx *bolt.Tx) error { return putJSON(tx.Bucket(bucketMeta), keyLastGC, &info) })
}

// LastGC is the last garbage collection noted, or nil.
func (j *Journal) LastGC() (*GCInfo, error) {
	var info *GCInfo
	err := j.view(func(tx *bolt.Tx) error {
		var g GCInfo
		if getJSON(tx.Bucket(bucketMeta), keyLastGC, &g) {
			info = &g
		}
		return nil
	})
	return info, err
}

// compactTxMax bounds one transaction of the copy, and so the memory it takes.
const compactTxMax = 64 << 20

// Compact rewrites the journal file without its free pages (a bbolt file never shrinks
// by itself) and returns its size before and after; a file whose free pages are less
// than worthCompacting of it is left as it is (bbolt reuses them), since a year's
// journal takes seconds to copy. The copy is made into a new file, synced, and renamed
// over the journal, all under the journal lock: a record waits for it (then keeps its
// calls aside, see spool.go) and the next write adds them to the new file, so none is
// lost; a process killed midway leaves the journal as it was.
func (j *Journal) Compact() (before, after int64, err error) {
	// The copy need not carry what stagings of processes that died left behind.
	if err := j.dropAbandonedStagings(); err != nil {
		return 0, 0, fmt.Errorf("compact journal %s: %w", j.path, err)
	}
	lock, err := j.acquire(j.Timeout)
	if err != nil {
		return 0, 0, err
	}
	defer lock.Release()
	// Opened as every call opens it, so that a file cut short is found damaged here too.
	f, err := j.openFile(os.O_RDONLY, 0)
	if err != nil {
		return 0, 0, j.classify(fmt.Errorf("compact journal: %w", err))
	}
	fi, err := f.Stat()
	f.Close()
	if err != nil {
		return 0, 0, fmt.Errorf("compact journal: %w", err)
	}
	tmp := j.path + ".compact"
	copied := false
	compact := func() (err error) {
		copied, err = compactInto(j.path, tmp, fi.Mode().Perm())
		return j.classify(err)
	}
	// After a panic, the files compactInto opened stay mapped, and locked, until the
	// process ends.
	if err := j.guard(new(*os.File), compact); err != nil {
		os.Remove(tmp)
		return 0, 0, fmt.Errorf("compact journal %s: %w", j.path, err)
	}
	if !copied {
		return fi.Size(), fi.Size(), nil
	}
	// The journal's own mode, not as the umask cut it, and its owner and group.
	keepOwner(tmp, fi)
	if err := os.Chmod(tmp, fi.Mode().Perm()); err != nil {
		os.Remove(tmp)
		return 0, 0, fmt.Errorf("compact journal %s: %w", j.path, err)
	}
	if err := os.Rename(tmp, j.path); err != nil {
		os.Remove(tmp)
		return 0, 0, fmt.Errorf("compact journal %s: %w", j.path, err)
	}
	if d, err := os.Open(filepath.Dir(j.path)); err == nil {
		d.Sync()
		d.Close()
	}
	now, err := os.Stat(j.path)
	if err != nil {
		return 0, 0, err
	}
	return fi.Size(), now.Size(), nil
}

// worthCompacting is the share of the journal file its free pages must reach for
// Compact to copy it.
const worthCompacting = 0.25

// compactInto copies the bbolt file src into a new file dst, synced when it returns,
// if its free pages are worth it (worthCompacting); copied says whether it did.
func compactInto(src, dst string, mode os.FileMode) (copied bool, err error) {
	os.Remove(dst) // left by a compaction that was killed
	from, err := bolt.Open(src, 0, &bolt.Options{Timeout: time.Second, ReadOnly: true, PreLoadFreelist: true})
	if err != nil {
		return false, err
	}
	defer from.Close()
	var size int64
	if err := from.View(func(tx *bolt.Tx) error { size = tx.Size(); return checkSchema(tx) }); err != nil {
		return false, err
	}
	if free := int64(from.Stats().FreePageN * from.Info().PageSize); float64(free) < worthCompacting*float64(size) {
		return false, nil
	}
	// Synced once at the end rather than at each of the copy's transactions or growths.
	to, err := bolt.Open(dst, mode, &bolt.Options{Timeout: time.Second, NoSync: true, NoGrowSync: true})
	if err != nil {
		return false, err
	}
	// Grown in small steps: bbolt's default, 16 MiB at a time, would leave the compacted
	// file up to 16 MiB larger than what it holds.
	to.AllocSize = 1 << 20
	err = bolt.Compact(to, from, compactTxMax)
	if err == nil {
		err = to.Sync()
	}
	if cerr := to.Close(); err == nil {
		err = cerr
	}
	return true, err
}
