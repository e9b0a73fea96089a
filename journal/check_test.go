package journal

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// writeRaw changes the journal file with bbolt alone, past agmem's invariants.
func writeRaw(t *testing.T, j *Journal, fn func(*bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(j.path, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
}

func TestCheckFindsWhatIsWrong(t *testing.T) {
	for _, c := range []struct {
		name   string
		damage func(*testing.T, *Journal)
		want   string // in one of the findings
	}{
		{"a meta page overwritten", func(t *testing.T, j *Journal) {
			overwrite(t, j, pageHeader+metaSumStart, []byte("garbage!"))
		}, "meta page 0 fails its checksum"},
		{"a page overwritten", func(t *testing.T, j *Journal) {
			overwrite(t, j, rootPage(t, j)+pageFlags, []byte{0xff, 0xff})
		}, "journal is damaged"},
		{"cut short", func(t *testing.T, j *Journal) {
			if err := os.Truncate(j.path, usedSize(t, j)/2); err != nil {
				t.Fatal(err)
			}
		}, "it was cut short"},
		{"a schema that is not a number", func(t *testing.T, j *Journal) {
			writeRaw(t, j, func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(keySchema, []byte("one")) })
		}, `schema version "one" is not a number`},
		{"an id not indexed", func(t *testing.T, j *Journal) {
			writeRaw(t, j, func(tx *bolt.Tx) error {
				k, _ := tx.Bucket(bucketIDs).Cursor().First()
				return tx.Bucket(bucketIDs).Delete(k)
			})
		}, "is not in the id index"},
		{"a pending key without its entry", func(t *testing.T, j *Journal) {
			writeRaw(t, j, func(tx *bolt.Tx) error {
				return tx.Bucket(bucketPending).Put(sessionKey("s1", seqKey(999999)), nil)
			})
		}, `session "s1" has entry 999999 pending, which is not there`},
		{"a timeline key without its entry", func(t *testing.T, j *Journal) {
			writeRaw(t, j, func(tx *bolt.Tx) error {
				return tx.Bucket(bucketTimeline).Put(timelineKey("s1", t0, 999999), nil)
			})
		}, "the timeline names entry 999999, which is not there"},
		{"a tool call without its entry", func(t *testing.T, j *Journal) {
			writeRaw(t, j, func(tx *bolt.Tx) error {
				return tx.Bucket(bucketCalls).Put(sessionKey("s1", []byte("toolu_x")), seqKey(999999))
			})
		}, "is indexed to entry 999999, which is not there"},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := filledJournal(t)
			if findings, err := j.Check(); err != nil || len(findings) > 0 {
				t.Fatalf("a sound journal: findings %q, error %v", findings, err)
			}
			c.damage(t, j)
			findings, err := j.Check()
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if !strings.Contains(strings.Join(findings, "\n"), c.want) {
				t.Errorf("findings %q, want one with %q", findings, c.want)
			}
			for _, f := range findings {
				if strings.Contains(f, "\n") {
					t.Errorf("finding %q is more than one line", f)
				}
			}
		})
	}
}

func TestCheckOfNewerSchema(t *testing.T) {
	j := newJournal(t)
	writeRaw(t, j, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keySchema, []byte(strconv.Itoa(SchemaVersion+1)))
	})
	if findings, err := j.Check(); !errors.Is(err, ErrNewerSchema) {
		t.Errorf("Check of a newer journal: findings %q, error %v; want ErrNewerSchema", findings, err)
	}
}

func TestCheckOfNoJournal(t *testing.T) {
	if _, err := At(t.TempDir()).Check(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Check of a missing journal: %v, want os.ErrNotExist", err)
	}
}
