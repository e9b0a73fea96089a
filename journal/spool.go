package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/agmem/agmem/internal/failpoint"
	"github.com/agmem/agmem/memory"
)

// The spool keeps aside the entries of an Append that another process kept from the
// journal past its wait (a gc compacting a year's journal holds it for seconds; an
// agent's hook is killed at 10): one file per call in .agmem/spool/, written whole and
// synced before Append returns, so a call acknowledged is never lost. The next write
// to the journal, by any process, appends each file in a transaction of its own, which
// also marks the file appended (spoolMark), then removes the file and its mark: a
// process that dies in between leaves a file the next write only removes. Nothing of
// the spool fails the write that drains it: a file that cannot be appended now stays
// for the next, one that can never be (it holds no entries) is renamed *.refused.
const (
	spoolName    = "spool"
	spoolExt     = ".json"
	partPrefix   = ".part-"   // a file being written: never read
	refusedExt   = ".refused" // a file that holds no entries: kept for a person to see
	partLifetime = time.Hour  // a part older than this was left by a process that died
)

// spoolBudget bounds what one write spends adding what was kept aside (about 0.7 ms a
// file): the write may be a hook's, and a backlog of thousands would take it past the
// second a record promises. Drain adds it all.
var spoolBudget = 250 * time.Millisecond

// spooledCall is one Append kept aside: its entries and how they join the journal.
type spooledCall struct {
	Now       time.Time         `json:"now"`
	IdleGap   time.Duration     `json:"idle_gap"`
	Elsewhere bool              `json:"elsewhere,omitempty"`
	Entries   []json.RawMessage `json:"entries"`
}

func (j *Journal) spoolDir() string { return filepath.Join(filepath.Dir(j.path), spoolName) }

// spoolMark marks the spool file name appended, in the transaction that appended it.
func spoolMark(name string) []byte { return append([]byte("spooled\x00"), name...) }

// spool writes entries into a file of the spool, and says each kept aside.
func (j *Journal) spool(entries []Prepared, o AppendOptions) ([]Appended, error) {
	call := spooledCall{Now: o.Now, IdleGap: o.IdleGap, Elsewhere: o.Elsewhere}
	out := make([]Appended, len(entries))
	for i, p := range entries {
		raw, id, err := p.json()
		if err != nil {
			return nil, err
		}
		call.Entries = append(call.Entries, raw)
		out[i] = Appended{ID: id, Spooled: true}
	}
	data, err := json.Marshal(call)
	if err != nil {
		return nil, err
	}
	if err := j.writeSpooled(data); err != nil {
		return nil, fmt.Errorf("%w (%s), and the call could not be kept aside: %w", ErrLocked, j.path, err)
	}
	return out, nil
}

// json is the entry as JSON, and its id.
func (p Prepared) json() (json.RawMessage, string, error) {
	if p.entry != nil {
		raw, err := json.Marshal(p.entry)
		return raw, p.entry.ID(), err
	}
	raw, err := entryJSON(p.value)
	return raw, p.head.id, err
}

// writeSpooled writes data as a spool file, under a name that sorts by when it was
// written: synced, then renamed into place, then the rename synced. The directory and
// the file take the mode, owner and group of .agmem/ and the journal, so that every
// user who may write the journal may drain the spool.
func (j *Journal) writeSpooled(data []byte) error {
	dir := j.spoolDir()
	// The pid and a random tag tell apart two calls of the same nanosecond.
	name := fmt.Sprintf("%020d-%d-%08x%s", time.Now().UnixNano(), os.Getpid(), rand.Uint32(), spoolExt)
	part := filepath.Join(dir, partPrefix+name)
	f, err := j.createIn(dir, part)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(part, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(part)
		return err
	}
	return syncDir(dir)
}

// createIn creates path in dir, making dir first where it is missing (a drain removes
// it once empty, maybe between the two: then once more).
func (j *Journal) createIn(dir, path string) (*os.File, error) {
	for try := 0; ; try++ {
		if err := makeLike(dir, filepath.Dir(j.path)); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrNotExist) && try == 0 {
			continue
		}
		if err == nil {
			if jf, serr := os.Stat(j.path); serr == nil {
				f.Chmod(jf.Mode().Perm())
				keepOwner(path, jf)
			}
		}
		return f, err
	}
}

// makeLike makes the directory dir, if missing, with the mode, owner and group of like.
func makeLike(dir, like string) error {
	fi, err := os.Stat(like)
	if err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o700); errors.Is(err, fs.ErrExist) {
		return nil
	} else if err != nil {
		return err
	}
	keepOwner(dir, fi)
	return os.Chmod(dir, fi.Mode()&(fs.ModePerm|fs.ModeSetgid))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// drainSpool appends what calls kept aside, oldest first (by name), each file in a
// transaction of its own, for spoolBudget at most, then removes the files appended and
// their marks, and the directory once empty. It never fails the write that drains: a
// file that cannot be read, appended or removed now, or past the budget, is left for
// the next write (agmem status counts it). The caller holds the lock.
func (j *Journal) drainSpool(db *bolt.DB) {
	dir := j.spoolDir()
	files, err := os.ReadDir(dir)
	if err != nil {
		return // nearly always none: one failed open, on every record
	}
	var removed [][]byte
	deadline := time.Now().Add(spoolBudget)
	for _, f := range files {
		if time.Now().After(deadline) {
			break // the rest for the next writes: this one may be a hook's
		}
		path := filepath.Join(dir, f.Name())
		switch {
		case !f.Type().IsRegular(): // nothing a spool writes: left alone
		case strings.HasPrefix(f.Name(), partPrefix):
			if info, err := f.Info(); err == nil && time.Since(info.ModTime()) > partLifetime {
				os.Remove(path)
			}
		case strings.HasSuffix(f.Name(), spoolExt):
			if j.appendSpooled(db, path) {
				removed = append(removed, spoolMark(f.Name()))
			}
		}
	}
	if len(removed) > 0 {
		db.Update(func(tx *bolt.Tx) error {
			for _, k := range removed {
				if err := tx.Bucket(bucketMeta).Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
	}
	// Removed only once empty, so that a record costs one failed open again; not while
	// anything is left in it, or one just spooled.
	os.Remove(dir)
}

// appendSpooled appends one spool file, unless its mark says it was, and removes it;
// removed says it did. A file that holds no entries is renamed *.refused.
func (j *Journal) appendSpooled(db *bolt.DB, path string) (removed bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	entries, err := decodeSpooled(data)
	if err != nil {
		os.Rename(path, strings.TrimSuffix(path, spoolExt)+refusedExt)
		return false
	}
	mark := spoolMark(filepath.Base(path))
	err = db.Update(func(tx *bolt.Tx) error {
		if err := ensureBuckets(tx); err != nil {
			return err
		}
		meta := tx.Bucket(bucketMeta)
		if meta.Get(mark) != nil {
			return nil // appended before, by a process that died before removing it
		}
		if _, err := appendAll(tx, Entries(entries.list), entries.options); err != nil {
			return err
		}
		return meta.Put(mark, nil)
	})
	if err != nil {
		return false // the journal's trouble (a file too large, a disk full): next time
	}
	failpoint.Hit("spool-appended")
	return os.Remove(path) == nil
}

// decodedCall is a spool file read: its entries, each checked as the transaction will
// check it, and how they join the journal.
type decodedCall struct {
	list    []memory.Entry
	options AppendOptions
}

func decodeSpooled(data []byte) (decodedCall, error) {
	var call spooledCall
	if err := json.Unmarshal(data, &call); err != nil {
		return decodedCall{}, err
	}
	if len(call.Entries) == 0 {
		return decodedCall{}, errors.New("a spooled call of no entries") // no Append writes one
	}
	d := decodedCall{list: make([]memory.Entry, len(call.Entries)),
		options: AppendOptions{Now: call.Now, IdleGap: call.IdleGap, Elsewhere: call.Elsewhere}}
	for i, raw := range call.Entries {
		if err := json.Unmarshal(raw, &d.list[i]); err != nil {
			return decodedCall{}, fmt.Errorf("spooled entry %d: %w", i+1, err)
		}
		if err := validWherePlaced(d.list[i]); err != nil {
			return decodedCall{}, fmt.Errorf("spooled entry %d: %w", i+1, err)
		}
	}
	return d, nil
}

// validWherePlaced checks e as the transaction will once it has a session: one that
// names none joins the open session there.
func validWherePlaced(e memory.Entry) error {
	if (e.Observation == nil) == (e.Event == nil) || e.Session() != "" {
		return e.Validate()
	}
	e.SetSession("open")
	defer e.SetSession("")
	return e.Validate()
}

// Spooled counts the calls kept aside that wait for the next write to the journal, and
// the files set aside as refused (*.refused in .agmem/spool/).
func (j *Journal) Spooled() (waiting, refused int, err error) {
	files, err := os.ReadDir(j.spoolDir())
	if errors.Is(err, fs.ErrNotExist) {
		return 0, 0, nil
	}
	for _, f := range files {
		switch {
		case !f.Type().IsRegular(), strings.HasPrefix(f.Name(), partPrefix):
		case strings.HasSuffix(f.Name(), spoolExt):
			waiting++
		case strings.HasSuffix(f.Name(), refusedExt):
			refused++
		}
	}
	return waiting, refused, err
}

// Drain appends all that calls kept aside, a write at a time (each adds what it can in
// spoolBudget), until none waits or a write adds none of what does.
func (j *Journal) Drain() error {
	for before := -1; ; {
		waiting, _, err := j.Spooled()
		if err != nil || waiting == 0 || waiting == before {
			return err
		}
		before = waiting
		if err := j.update(func(*bolt.Tx) error { return nil }); err != nil {
			return err
		}
	}
}
