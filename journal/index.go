package journal

import (
	"bytes"

	bolt "go.etcd.io/bbolt"
)

// The indexes of entries (ids, calls, timeline, pending) are each a bucket, and, for a
// while after a large record, parts. A Staging writes the index keys of what it stores
// into buckets of its own under the stagings bucket, where no reader looks while the
// meta bucket names the staging as under way; its last transaction ends that, and its
// buckets become a part, where every reader looks. So a record of any size becomes
// visible in one small transaction, and no transaction holds more than a part of it:
// bbolt keeps every page a transaction writes in memory until it commits, about 700
// bytes an entry for the four indexes.
//
// A part is merged into the index buckets a bounded chunk at a time afterwards
// (mergeParts); until then readers see the bucket and its parts as one index. A key is
// in one of them only: a part's keys were checked against the index when it became one.

var (
	// staging id → its own ids, calls, timeline, pending: a part once the meta bucket
	// no longer names the staging as under way
	bucketStagings = []byte("stagings")

	indexBuckets = [][]byte{bucketIDs, bucketCalls, bucketTimeline, bucketPending}
)

// partNames are the names of the parts under the stagings bucket, in order.
func partNames(tx *bolt.Tx) [][]byte {
	stagings := tx.Bucket(bucketStagings)
	if stagings == nil {
		return nil
	}
	meta := tx.Bucket(bucketMeta)
	var names [][]byte
	c := stagings.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v == nil && meta.Get(stagingKey(string(k))) == nil {
			names = append(names, bytes.Clone(k))
		}
	}
	return names
}

// index is one of the indexes of entries as a reader sees it: its bucket and the parts
// not merged into it yet.
type index struct {
	main  *bolt.Bucket
	parts []*bolt.Bucket
}

// indexOf is the index named name (one of indexBuckets) in tx.
func indexOf(tx *bolt.Tx, name []byte) index { return indexIn(tx, name, partNames(tx)) }

// indexIn is the index named name, with parts.
func indexIn(tx *bolt.Tx, name []byte, parts [][]byte) index {
	x := index{main: tx.Bucket(name)}
	for _, part := range parts {
		if b := tx.Bucket(bucketStagings).Bucket(part).Bucket(name); b != nil {
			x.parts = append(x.parts, b)
		}
	}
	return x
}

// Get is the value of key, or nil.
func (x index) Get(key []byte) []byte {
	if v := x.main.Get(key); v != nil {
		return v
	}
	for _, p := range x.parts {
		if v := p.Get(key); v != nil {
			return v
		}
	}
	return nil
}

// Put puts key into the index's bucket.
func (x index) Put(key, value []byte) error { return x.main.Put(key, value) }

// Delete takes key out of the index, wherever it is.
func (x index) Delete(key []byte) error {
	if err := x.main.Delete(key); err != nil {
		return err
	}
	for _, p := range x.parts {
		if err := p.Delete(key); err != nil {
			return err
		}
	}
	return nil
}

// ForEach calls fn with each key and value in key order. fn must not change the index.
func (x index) ForEach(fn func(k, v []byte) error) error {
	c := x.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

// Cursor walks the index's bucket and parts as one, in key order.
func (x index) Cursor() *cursor {
	c := &cursor{}
	for _, b := range append([]*bolt.Bucket{x.main}, x.parts...) {
		c.of = append(c.of, b.Cursor())
	}
	c.at = make([]kv, len(c.of))
	return c
}

// cursor is a bolt.Cursor over an index: each underlying cursor's current pair, and
// the least of them is the cursor's (the first of them, should two hold one key).
type cursor struct {
	of  []*bolt.Cursor
	at  []kv
	key []byte // the cursor's current key
}

type kv struct{ k, v []byte }

func (c *cursor) First() ([]byte, []byte) {
	for i, bc := range c.of {
		c.at[i].k, c.at[i].v = bc.First()
	}
	return c.least()
}

func (c *cursor) Seek(seek []byte) ([]byte, []byte) {
	for i, bc := range c.of {
		c.at[i].k, c.at[i].v = bc.Seek(seek)
	}
	return c.least()
}

func (c *cursor) Next() ([]byte, []byte) {
	if c.key == nil {
		return nil, nil
	}
	for i, bc := range c.of {
		if bytes.Equal(c.at[i].k, c.key) {
			c.at[i].k, c.at[i].v = bc.Next()
		}
	}
	return c.least()
}

func (c *cursor) least() ([]byte, []byte) {
	least := 0
	for i := 1; i < len(c.at); i++ {
		if k := c.at[i].k; k != nil && (c.at[least].k == nil || bytes.Compare(k, c.at[least].k) < 0) {
			least = i
		}
	}
	c.key = c.at[least].k
	return c.at[least].k, c.at[least].v
}

// indexes are the four indexes of entries as one place to look an entry up or put its
// keys: the visible ones, or a staging's own.
type indexes struct {
	ids, calls, timeline, pending index
}

// visibleIndexes are the indexes every reader sees.
func visibleIndexes(tx *bolt.Tx) indexes {
	parts := partNames(tx)
	return indexes{indexIn(tx, bucketIDs, parts), indexIn(tx, bucketCalls, parts),
		indexIn(tx, bucketTimeline, parts), indexIn(tx, bucketPending, parts)}
}

// ownIndexes are the index buckets of a staging, made if need be; its keys go there,
// out of sight until its last transaction makes them a part.
func ownIndexes(tx *bolt.Tx, staging string) (indexes, error) {
	own, err := tx.Bucket(bucketStagings).CreateBucketIfNotExists([]byte(staging))
	if err != nil {
		return indexes{}, err
	}
	var b [4]*bolt.Bucket
	for i, name := range indexBuckets {
		if b[i], err = own.CreateBucketIfNotExists(name); err != nil {
			return indexes{}, err
		}
	}
	return indexes{index{main: b[0]}, index{main: b[1]}, index{main: b[2]}, index{main: b[3]}}, nil
}

// byName is the index named name (one of indexBuckets).
func (xs indexes) byName(name []byte) index {
	switch {
	case bytes.Equal(name, bucketIDs):
		return xs.ids
	case bytes.Equal(name, bucketCalls):
		return xs.calls
	case bytes.Equal(name, bucketTimeline):
		return xs.timeline
	}
	return xs.pending
}

// mergeChunk bounds the keys one transaction of mergeParts moves: the journal is free
// for records between two.
const mergeChunk = 50000

// mergeParts moves the keys of every part into the index buckets, mergeChunk at a
// time, each put and taken out of its part in one transaction, and drops a part left
// empty. A process killed midway leaves every key in the index or in a part, and the
// next call goes on. (Copying a part whole and dropping it was faster, but dropping a
// bucket reads every page of it at once: 70 MB more of a process's memory, for a part
// of 1,000,000 entries.)
func (j *Journal) mergeParts() error {
	for {
		more := false
		err := j.update(func(tx *bolt.Tx) error {
			stagings := tx.Bucket(bucketStagings)
			n := 0
			for _, name := range partNames(tx) {
				part := stagings.Bucket(name)
				for _, bucket := range indexBuckets {
					from := part.Bucket(bucket)
					if from == nil {
						continue
					}
					moved, err := moveKeys(from, tx.Bucket(bucket), mergeChunk-n)
					if err != nil {
						return err
					}
					if n += moved; n >= mergeChunk {
						more = true
						return nil
					}
					if err := part.DeleteBucket(bucket); err != nil {
						return err
					}
				}
				if err := stagings.DeleteBucket(name); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil || !more {
			return err
		}
	}
}

// moveKeys moves the first n keys of one bucket, or all it holds, into another, and
// says how many it moved.
func moveKeys(from, to *bolt.Bucket, n int) (int, error) {
	to.FillPercent = appendFill
	var keys [][]byte
	c := from.Cursor()
	for k, v := c.First(); k != nil && len(keys) < n; k, v = c.Next() {
		k = bytes.Clone(k)
		if err := to.Put(k, bytes.Clone(v)); err != nil {
			return 0, err
		}
		keys = append(keys, k)
	}
	for _, k := range keys {
		if err := from.Delete(k); err != nil {
			return 0, err
		}
	}
	return len(keys), nil
}

// hasParts says whether any part waits to be merged.
func hasParts(tx *bolt.Tx) bool { return len(partNames(tx)) > 0 }

// dropIndex empties the index named name, its bucket and its parts, a page at a time,
// and returns its bucket.
func dropIndex(tx *bolt.Tx, name []byte) (*bolt.Bucket, error) {
	for _, part := range partNames(tx) {
		b := tx.Bucket(bucketStagings).Bucket(part)
		if b.Bucket(name) != nil {
			if err := b.DeleteBucket(name); err != nil {
				return nil, err
			}
		}
	}
	if err := tx.DeleteBucket(name); err != nil {
		return nil, err
	}
	return tx.CreateBucket(name)
}
