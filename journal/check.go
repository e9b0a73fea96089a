package journal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"slices"
	"strconv"

	bolt "go.etcd.io/bbolt"
)

// Check reads the whole journal and returns what is wrong with it, one line per finding,
// or none for a sound journal. It looks at what bbolt keeps (both meta pages valid, the
// file as long as its pages, every page in use reachable once and never also free, keys
// in order) and at agmem's own invariants: every bucket there, the schema recorded and
// a number, every entry decodable and indexed by its id, every indexed id
// and every pending key naming an entry.
//
// Damage that keeps the journal from opening at all is a finding too. The error is for a
// journal that could not be looked at: missing (os.ErrNotExist), written by a newer
// agmem (ErrNewerSchema), locked, unreadable.
//
// Check takes the journal lock and reads every page, so it is not for the record path.
func (j *Journal) Check() ([]string, error) {
	var findings []string
	err := j.with(true, func(db *bolt.DB) error {
		// Under the journal lock: no writer is halfway through a meta page.
		metas, err := j.checkMetaPages()
		if err != nil {
			return err
		}
		findings = metas
		return db.View(func(tx *bolt.Tx) error {
			if err := checkSchema(tx); errors.Is(err, ErrNewerSchema) {
				return err // not damage: this agmem cannot tell what is right in it
			}
			// bbolt's check runs on a goroutine of its own, where a fault on a page cannot
			// be recovered: reading every key first faults here instead, where with
			// recovers it. (with has also made sure that no page lies past the file's end.)
			findings = append(findings, checkInvariants(tx)...)
			for err := range tx.Check() {
				findings = append(findings, "bbolt: "+err.Error())
			}
			return nil
		})
	})
	if errors.Is(err, ErrDamaged) {
		return append(findings, err.Error()), nil
	}
	return findings, err
}

// bbolt's meta page, as it lays it out in the file after the 16-byte page header.
const (
	metaMagic    = 0xED0CDAED
	metaVersion  = 2
	pageHeader   = 16
	metaSumStart = 56 // the checksum covers the meta's bytes before it
	metaSize     = metaSumStart + 8
)

// checkMetaPages finds a meta page that bbolt would pass over. bbolt opens a journal
// with one bad meta page without a word, from the other one, which may be a transaction
// older: the last transaction is then silently gone.
func (j *Journal) checkMetaPages() ([]string, error) {
	f, err := os.Open(j.path)
	if err != nil {
		return nil, fmt.Errorf("check journal: %w", err)
	}
	defer f.Close()
	var findings []string
	pageSize := int64(os.Getpagesize())
	for i := int64(0); i < 2; i++ {
		meta := make([]byte, metaSize)
		if _, err := f.ReadAt(meta, i*pageSize+pageHeader); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("check journal: %w", err)
		}
		if problem := metaProblem(meta); problem != "" {
			findings = append(findings, fmt.Sprintf("meta page %d %s", i, problem))
		} else if i == 0 {
			pageSize = int64(binary.NativeEndian.Uint32(meta[8:]))
		}
	}
	return findings, nil
}

func metaProblem(meta []byte) string {
	sum := fnv.New64a()
	sum.Write(meta[:metaSumStart])
	switch {
	case binary.NativeEndian.Uint32(meta) != metaMagic:
		return "is not a bbolt meta page"
	case binary.NativeEndian.Uint32(meta[4:]) != metaVersion:
		return fmt.Sprintf("has bbolt version %d, not %d", binary.NativeEndian.Uint32(meta[4:]), metaVersion)
	case binary.NativeEndian.Uint64(meta[metaSumStart:]) != sum.Sum64():
		return "fails its checksum: bbolt reads the other one, which may be a transaction older"
	}
	return ""
}

// checkInvariants reads every key of every bucket and returns what breaks agmem's own
// invariants.
func checkInvariants(tx *bolt.Tx) []string {
	var findings []string
	found := func(format string, args ...any) { findings = append(findings, fmt.Sprintf(format, args...)) }
	tx.ForEach(func(_ []byte, b *bolt.Bucket) error {
		return b.ForEach(func(_, _ []byte) error { return nil })
	})
	for _, name := range allBuckets {
		if tx.Bucket(name) == nil && !slices.ContainsFunc(newBuckets, func(b []byte) bool { return bytes.Equal(b, name) }) {
			found("bucket %s is missing", name)
		}
	}
	if len(findings) > 0 {
		return findings
	}

	if raw := tx.Bucket(bucketMeta).Get(keySchema); raw == nil {
		found("no schema version is recorded")
	} else if _, err := strconv.Atoi(string(raw)); err != nil {
		found("schema version %q is not a number", raw)
	}

	entries, ids := tx.Bucket(bucketEntries), indexOf(tx, bucketIDs)
	staged, err := stagedSeqs(tx)
	if err != nil {
		found("%v", err)
	}
	entries.ForEach(func(seq, raw []byte) error {
		if e, err := decodeEntry(raw); err != nil {
			found("entry %d does not decode: %v", seqOf(seq), err)
		} else if staged(seq) {
			// stored by a large record in parts, named by no visible index until its last
		} else if at := ids.Get([]byte(e.ID())); string(at) != string(seq) {
			found("entry %d (%s) is not in the id index", seqOf(seq), e.ID())
		}
		return nil
	})
	ids.ForEach(func(id, seq []byte) error {
		if entries.Get(seq) == nil {
			found("id %s is indexed to entry %d, which is not there", id, seqOf(seq))
		}
		return nil
	})
	indexOf(tx, bucketPending).ForEach(func(k, _ []byte) error {
		session, seq := k[:max(len(k)-9, 0)], k[max(len(k)-8, 0):]
		if entries.Get(seq) == nil {
			found("session %q has entry %d pending, which is not there", session, seqOf(seq))
		}
		return nil
	})
	indexOf(tx, bucketTimeline).ForEach(func(k, _ []byte) error {
		if seq := k[max(len(k)-8, 0):]; entries.Get(seq) == nil {
			found("the timeline names entry %d, which is not there", seqOf(seq))
		}
		return nil
	})
	indexOf(tx, bucketCalls).ForEach(func(k, seq []byte) error {
		if entries.Get(seq) == nil {
			found("tool call %q is indexed to entry %d, which is not there", k, seqOf(seq))
		}
		return nil
	})
	return findings
}

// seqOf is an entries key as its number; a key of the wrong length is shown as 0.
func seqOf(key []byte) uint64 {
	if len(key) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(key)
}
