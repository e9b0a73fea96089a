package journal

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/agmem/agmem/internal/flock"
	"github.com/agmem/agmem/internal/hint"
)

// SchemaVersion is the layout of the buckets below. A journal written by a newer agmem
// is refused rather than misread. 3: entries are stored as LZ4 blocks (codec.go); a
// journal of schema 1 (plain JSON) is read as it is and moves to 3 with its next write.
// Schema 2 was development builds' only, never released, whose S2 entries read as
// damage; it is 3 so that such a build refuses a journal of this one rather than
// writing into it entries this one cannot read. 4: a large record's committed parts
// (bucket stagings, index.go) hold recorded entries until they are merged, which an
// agmem of schema 3 would neither flush nor see when it records; a journal of 1 or 3 is
// read as it is and moves to 4 with its next write.
const SchemaVersion = 4

var schemaValue = []byte(strconv.Itoa(SchemaVersion))

// ErrLocked is returned when another process held the journal for the whole timeout.
var ErrLocked = errors.New("journal is locked by another agmem process")

// ErrNewerSchema is returned for a journal written by a newer agmem.
var ErrNewerSchema = hint.NewCause("journal was written by a newer agmem",
	"upgrade agmem: a newer version wrote this journal")

// ErrDamaged is returned for a journal file that bbolt cannot read as one: cut short,
// overwritten, or inconsistent. The error says what was found; Check finds the rest.
var ErrDamaged = hint.NewCause("journal is damaged",
	`"agmem verify" says what is wrong; move .agmem/journal.db aside to record again (what is in git is kept; what was not yet flushed stays only in the file moved)`)

// ErrReadOnly is returned when the journal, its lock or their file system cannot be
// written.
var ErrReadOnly = hint.NewCause("journal is read-only",
	"make .agmem/ and the files in it writable (a read-only mount, chmod or chattr +i stops agmem)")

// ErrDiskFull is returned when the journal's disk has no room for a transaction. The
// transaction leaves nothing behind, and everything committed before it stays.
var ErrDiskFull = hint.NewCause("no space left on the journal's disk",
	"free some space on the disk that holds the memory repo; what was recorded before is kept")

var (
	bucketMeta     = []byte("meta")     // schema, open session, last flush and gc, forgotten, stagings
	bucketEntries  = []byte("entries")  // seq → Entry as an LZ4 block of its JSON (codec.go)
	bucketIDs      = []byte("ids")      // entry id → seq
	bucketCalls    = []byte("calls")    // session \x00 tool_use_id → seq
	bucketSessions = []byte("sessions") // session id → SessionInfo as JSON
	bucketTimeline = []byte("timeline") // session \x00 unix-nanos \x00 seq → nothing
	bucketPending  = []byte("pending")  // session \x00 seq → the entry's kind, memory type (pendingValue)
	bucketBatches  = []byte("batches")  // batch id → Batch as JSON
	bucketWatches  = []byte("watches")  // watched file's path → WatchMark as JSON
	bucketLedger   = []byte("ledger")   // seq → Committed as JSON, every commit a flush wrote

	// And the stagings of index.go.
	allBuckets = [][]byte{bucketMeta, bucketEntries, bucketIDs, bucketCalls, bucketSessions,
		bucketTimeline, bucketPending, bucketBatches, bucketWatches, bucketLedger, bucketStagings}
	// newBuckets are those a journal an older agmem wrote lacks until its next write.
	newBuckets = [][]byte{bucketLedger, bucketStagings}

	keySchema      = []byte("schema")
	keyBirth       = []byte("birth") // when the journal was made: a journal made anew has another
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
	// SpoolAfter, when not 0 and less than Timeout, is how long Append waits for the
	// lock before it keeps its entries aside (spool.go).
	SpoolAfter time.Duration
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

func (j *Journal) update(fn func(*bolt.Tx) error) error { return j.with(false, updating(fn)) }

// updating runs fn in a write transaction that sees every bucket.
func updating(fn func(*bolt.Tx) error) func(*bolt.DB) error {
	return func(db *bolt.DB) error {
		return db.Update(func(tx *bolt.Tx) error {
			if err := ensureBuckets(tx); err != nil {
				return err
			}
			return fn(tx)
		})
	}
}

// view runs fn in a read transaction. A journal that does not exist yet, or has no
// buckets yet, is created first, so that fn always sees every bucket but newBuckets.
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
// What the file or its disk does to bbolt comes back as an error that says so:
// ErrDamaged, ErrReadOnly or ErrDiskFull (see classify).
func (j *Journal) with(readOnly bool, fn func(*bolt.DB) error) error {
	lock, err := j.acquire(j.Timeout)
	if err != nil {
		return err
	}
	return j.holding(lock, readOnly, fn)
}

// holding is with for a caller that took the journal lock itself; it releases it. A
// writer first appends what calls kept aside while others held the lock (drainSpool).
func (j *Journal) holding(lock *flock.Lock, readOnly bool, fn func(*bolt.DB) error) error {
	defer lock.Release()
	var file *os.File
	return j.guard(&file, func() error {
		// Our own lock already serialises agmem processes; bbolt's flock only guards
		// against other programs opening the file, so its timeout can stay short.
		db, err := bolt.Open(j.path, 0o644, &bolt.Options{Timeout: min(time.Second, j.Timeout), ReadOnly: readOnly,
			// Mapped, not read: a map large enough from the start spares a big transaction
			// the remaps (each copies every node it holds) of a file that grows.
			InitialMmapSize: initialMmap,
			OpenFile: func(_ string, flag int, perm os.FileMode) (*os.File, error) {
				f, err := j.openFile(flag, perm)
				file = f
				return f, err
			}})
		if err != nil {
			if errors.Is(err, bolt.ErrTimeout) {
				return fmt.Errorf("%w (%s)", ErrLocked, j.path)
			}
			if failure := j.classify(err); failure != err {
				return failure
			}
			return fmt.Errorf("open journal %s: %w", j.path, err)
		}
		err = db.View(func(tx *bolt.Tx) error { return checkLength(tx, file) })
		if err == nil && !readOnly {
			j.drainSpool(db)
		}
		if err == nil {
			err = fn(db)
		}
		err = j.classify(err)
		if cerr := db.Close(); err == nil && cerr != nil {
			err = j.classify(fmt.Errorf("close journal: %w", cerr))
		}
		return err
	})
}

// guard runs fn, which reads the journal file with bbolt, and returns a panic that the
// file caused as ErrDamaged. bbolt trusts the file: on damaged pages it panics, and on
// pages past the end of a file cut short its map faults, which guard makes a panic too.
// *bboltFile, if fn has set it, is the file bbolt opened: it is freed on a panic so
// that the process can go on using the journal.
func (j *Journal) guard(bboltFile **os.File, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			// bbolt has rolled its transaction back, or has panicked doing so, and then
			// db.Close would wait for ever on its own lock. Freeing the file instead
			// leaves only the map of it behind, address space until the process ends.
			if f := *bboltFile; f != nil {
				unlockFile(f)
				f.Close()
			}
			if !raisedByFile(p) {
				panic(p)
			}
			err = j.damaged(p)
		}
	}()
	return fn()
}

// openFile opens the journal file for bbolt. A file too short to hold bbolt's two meta
// pages is refused: bbolt would make a new journal of an empty one, and so hide that what
// it held is gone.
func (j *Journal) openFile(flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(j.path, flag&^os.O_CREATE, perm)
	if errors.Is(err, os.ErrNotExist) && flag&os.O_CREATE != 0 {
		return os.OpenFile(j.path, flag|os.O_EXCL, perm)
	}
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.Size() < 2*smallestPage {
		f.Close()
		return nil, damage(fmt.Sprintf("the file is %d bytes, too few for a journal", fi.Size()))
	}
	return f, nil
}

// smallestPage is the smallest page bbolt is given on any system agmem runs on: bbolt
// takes the system's page size.
const smallestPage = 4096

// checkLength finds a file shorter than the pages its meta page counts: bbolt would
// fault on the pages cut off, or write on with zeros in their place.
func checkLength(tx *bolt.Tx, file *os.File) error {
	fi, err := file.Stat()
	if err != nil {
		return err
	}
	if fi.Size() < tx.Size() {
		return damage(fmt.Sprintf("the file is %d bytes, its pages take %d: it was cut short", fi.Size(), tx.Size()))
	}
	return nil
}

// acquire takes the journal lock, waiting at most wait for another process.
func (j *Journal) acquire(wait time.Duration) (*flock.Lock, error) {
	lock, err := flock.Acquire(j.lock, wait)
	if errors.Is(err, flock.ErrTimeout) {
		return nil, fmt.Errorf("%w (%s)", ErrLocked, j.path)
	}
	return lock, j.classify(err)
}

// damage is what agmem itself finds wrong with the journal file.
type damage string

func (d damage) Error() string { return string(d) }

// classify wraps err in the sentinel that tells the user what to do about it, when it is
// one of those: damage, a read-only file or file system, a full disk. Other errors, and
// nil, pass unchanged.
func (j *Journal) classify(err error) error {
	var kind error
	var syntax *json.SyntaxError
	var mistyped *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, new(damage)), errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum),
		errors.Is(err, berrors.ErrVersionMismatch),
		// agmem only ever stores JSON it wrote itself
		errors.As(err, &syntax), errors.As(err, &mistyped):
		kind = ErrDamaged
	case errors.Is(err, syscall.EROFS), errors.Is(err, fs.ErrPermission):
		kind = ErrReadOnly
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT),
		// bbolt reports a failed grow or sync with %s, which drops the error's type.
		strings.Contains(err.Error(), syscall.ENOSPC.Error()):
		kind = ErrDiskFull
	default:
		return err
	}
	if pe, ok := err.(*fs.PathError); ok && pe.Path == j.path {
		return fmt.Errorf("%w (%s): %s: %w", kind, j.path, pe.Op, pe.Err) // the path once
	}
	return fmt.Errorf("%w (%s): %w", kind, j.path, err)
}

// damaged is ErrDamaged for a panic that the journal file caused.
func (j *Journal) damaged(p any) error {
	what := fmt.Sprint(p)
	if _, fault := p.(addressed); fault {
		what = "a page lies past the end of the file (was it cut short?) or cannot be read"
	}
	return fmt.Errorf("%w (%s): %s", ErrDamaged, j.path, what)
}

// addressed is the runtime error of a memory fault.
type addressed interface{ Addr() uintptr }

// raisedByFile says whether a panic being recovered came from the journal file rather
// than from a bug in agmem: raised in bbolt's code, or a memory fault away from nil,
// which inside a transaction can only be on bbolt's map of the file.
func raisedByFile(p any) bool {
	if f, ok := p.(addressed); ok && f.Addr() >= 1<<16 {
		return true
	}
	pc := make([]uintptr, 32)
	frames := runtime.CallersFrames(pc[:runtime.Callers(2, pc)])
	for panicking := false; ; {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic":
			panicking = true
		case panicking && !strings.HasPrefix(f.Function, "runtime."):
			return strings.HasPrefix(f.Function, "go.etcd.io/bbolt")
		}
		if !more {
			return false
		}
	}
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
	meta := tx.Bucket(bucketMeta)
	if meta.Get(keyBirth) == nil {
		if err := meta.Put(keyBirth, strconv.AppendInt(nil, time.Now().UnixNano(), 36)); err != nil {
			return err
		}
	}
	// New, or written by an older agmem: what this one writes needs its schema to be read.
	if !bytes.Equal(meta.Get(keySchema), schemaValue) {
		return meta.Put(keySchema, schemaValue)
	}
	return nil
}

// Birth names this journal file among those the repo ever had: a reader that keeps
// what it read by number (Since) starts again from the first when it changes. "" for a
// journal an older agmem made and this one has not written to yet.
func (j *Journal) Birth() (string, error) {
	var birth string
	err := j.view(func(tx *bolt.Tx) error {
		birth = string(tx.Bucket(bucketMeta).Get(keyBirth))
		return nil
	})
	return birth, err
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
	n := len(session) + 1
	for _, r := range rest {
		n += len(r)
	}
	k := append(append(make([]byte, 0, n), session...), 0)
	for _, r := range rest {
		k = append(k, r...)
	}
	return k
}

// timelineKey is session \x00 time seq, the two numbers big-endian, made in one
// allocation: a large append makes one for each entry.
func timelineKey(session string, t time.Time, seq uint64) []byte {
	var at, order [8]byte
	binary.BigEndian.PutUint64(at[:], uint64(t.UnixNano()))
	binary.BigEndian.PutUint64(order[:], seq)
	return sessionKey(session, at[:], order[:])
}
