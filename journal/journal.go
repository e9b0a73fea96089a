package journal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/agmem/agmem/flock"
)

// SchemaVersion is the layout of the buckets below. A journal written by a newer agmem
// is refused rather than misread. 2: entries are stored compressed (codec.go); a
// journal of schema 1 is read as it is and moves to 2 with its next write.
const SchemaVersion = 2

var schemaValue = []byte(strconv.Itoa(SchemaVersion))

// ErrLocked is returned when another process held the journal for the whole timeout.
var ErrLocked = errors.New("journal is locked by another agmem process")

// ErrNewerSchema is returned for a journal written by a newer agmem.
var ErrNewerSchema = errors.New("journal was written by a newer agmem")

var (
	bucketMeta     = []byte("meta")     // schema, open session, last flush
	bucketEntries  = []byte("entries")  // seq → Entry as JSON
	bucketIDs      = []byte("ids")      // entry id → seq
	bucketCalls    = []byte("calls")    // session \x00 tool_use_id → seq
	bucketSessions = []byte("sessions") // session id → SessionInfo as JSON
	bucketTimeline = []byte("timeline") // session \x00 unix-nanos \x00 seq → nothing
	bucketPending  = []byte("pending")  // session \x00 seq → nothing
	bucketBatches  = []byte("batches")  // batch id → Batch as JSON
	bucketWatches  = []byte("watches")  // watched file's path → WatchMark as JSON

	allBuckets = [][]byte{bucketMeta, bucketEntries, bucketIDs, bucketCalls, bucketSessions,
		bucketTimeline, bucketPending, bucketBatches, bucketWatches}

	keySchema      = []byte("schema")
	keyOpenSession = []byte("open_session")
	keyLastFlush   = []byte("last_flush")
)

// DefaultTimeout bounds how long a call waits for the journal lock.
const DefaultTimeout = 10 * time.Second

// Journal names a journal file. It holds nothing open between calls.
type Journal struct {
	path    string
	lock    string
	Timeout time.Duration
}

// At returns the journal kept in dir (a memory repo's .agmem directory).
func At(dir string) *Journal {
	return &Journal{
		path:    filepath.Join(dir, "journal.db"),
		lock:    filepath.Join(dir, "journal.lock"),
		Timeout: DefaultTimeout,
	}
}

// Path is the journal's file.
func (j *Journal) Path() string { return j.path }

// Create makes the journal file and its buckets if they do not exist yet.
func (j *Journal) Create() error {
	return j.update(func(*bolt.Tx) error { return nil })
}

func (j *Journal) update(fn func(*bolt.Tx) error) error {
	return j.with(false, func(db *bolt.DB) error {
		return db.Update(func(tx *bolt.Tx) error {
			if err := ensureBuckets(tx); err != nil {
				return err
			}
			return fn(tx)
		})
	})
}

// view runs fn in a read transaction. A journal that does not exist yet, or has no
// buckets yet, is created first, so that fn always sees every bucket.
func (j *Journal) view(fn func(*bolt.Tx) error) error {
	err := j.with(true, func(db *bolt.DB) error {
		return db.View(func(tx *bolt.Tx) error {
			if tx.Bucket(bucketBatches) == nil {
				return errIncomplete
			}
			if err := checkSchema(tx); err != nil {
				return err
			}
			return fn(tx)
		})
	})
	if errors.Is(err, errIncomplete) || errors.Is(err, os.ErrNotExist) {
		return j.update(fn)
	}
	return err
}

var errIncomplete = errors.New("journal has no buckets yet")

// with takes the journal lock, opens the file, runs fn and closes everything again.
func (j *Journal) with(readOnly bool, fn func(*bolt.DB) error) error {
	lock, err := flock.Acquire(j.lock, j.Timeout)
	if err != nil {
		if errors.Is(err, flock.ErrTimeout) {
			return fmt.Errorf("%w (%s)", ErrLocked, j.path)
		}
		return err
	}
	defer lock.Release()
	// Our own lock already serialises agmem processes; bbolt's flock only guards against
	// other programs opening the file, so its timeout can stay short.
	db, err := bolt.Open(j.path, 0o644, &bolt.Options{Timeout: time.Second, ReadOnly: readOnly,
		// Mapped, not read: a map large enough from the start spares a big transaction
		// the remaps (each copies every node it holds) of a file that grows.
		InitialMmapSize: initialMmap})
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			return fmt.Errorf("%w (%s)", ErrLocked, j.path)
		}
		return fmt.Errorf("open journal %s: %w", j.path, err)
	}
	err = fn(db)
	if cerr := db.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close journal: %w", cerr)
	}
	return err
}

func ensureBuckets(tx *bolt.Tx) error {
	for _, name := range allBuckets {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	if err := checkSchema(tx); err != nil {
		return err
	}
	// New, or written by an older agmem: what this one writes needs its schema to be read.
	if meta := tx.Bucket(bucketMeta); !bytes.Equal(meta.Get(keySchema), schemaValue) {
		return meta.Put(keySchema, schemaValue)
	}
	return nil
}

func checkSchema(tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		return nil
	}
	raw := meta.Get(keySchema)
	if raw == nil {
		return nil
	}
	v, err := strconv.Atoi(string(raw))
	if err != nil {
		return fmt.Errorf("journal schema %q is not a number", raw)
	}
	if v > SchemaVersion {
		return fmt.Errorf("%w (schema %d, this agmem reads up to %d)", ErrNewerSchema, v, SchemaVersion)
	}
	return nil
}

// initialMmap is how much of the journal file bbolt maps when it opens it: address
// space, not memory.
const initialMmap = 1 << 30

func seqKey(seq uint64) []byte {
	return binary.BigEndian.AppendUint64(nil, seq)
}

// sessionKey is session \x00 rest…: session ids hold no control characters, so the
// prefix of one session never matches another's.
func sessionKey(session string, rest ...[]byte) []byte {
	k := append([]byte(session), 0)
	for _, r := range rest {
		k = append(k, r...)
	}
	return k
}

func timelineKey(session string, t time.Time, seq uint64) []byte {
	return sessionKey(session, binary.BigEndian.AppendUint64(nil, uint64(t.UnixNano())), seqKey(seq))
}
