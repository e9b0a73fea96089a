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
// to the journal, by any process, appends each file in a transaction of its own and
// then removes it; an entry it appends twice (the process died between the two) is
// kept once, as every entry recorded again is.
const (
	spoolName    = "spool"
	spoolExt     = ".json"
	partPrefix   = ".part-"   // a file being written: never read
	refusedExt   = ".refused" // a file that cannot be appended: kept for a person to see
	partLifetime = time.Hour  // a part older than this was left by a process that died
)

// spooledCall is one Append kept aside: its entries and how they join the journal.
type spooledCall struct {
	Now       time.Time         `json:"now"`
	IdleGap   time.Duration     `json:"idle_gap"`
	Elsewhere bool              `json:"elsewhere,omitempty"`
	Entries   []json.RawMessage `json:"entries"`
}

func (j *Journal) spoolDir() string { return filepath.Join(filepath.Dir(j.path), spoolName) }

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
		return nil, fmt.Errorf("%w (%s), and the call could not be kept aside: %w", ErrLocked, j.path, j.classify(err))
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
// written: synced, then renamed into place, then the rename synced.
func (j *Journal) writeSpooled(data []byte) error {
	dir := j.spoolDir()
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	// The pid and a random tag tell apart two calls of the same nanosecond.
	name := fmt.Sprintf("%020d-%d-%08x%s", time.Now().UnixNano(), os.Getpid(), rand.Uint32(), spoolExt)
	part := filepath.Join(dir, partPrefix+name)
	f, err := os.OpenFile(part, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
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

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// drainSpool appends what calls kept aside, oldest first (by name), each file in a transaction
// of its own, removing it once appended. A file that cannot be appended for what it
// holds is renamed *.refused and left for a person (agmem status counts it), rather
// than failing every write after it; a failure of the journal's own (a full disk)
// fails the caller's write, as it would have failed anyway. The caller holds the lock.
func (j *Journal) drainSpool(db *bolt.DB) error {
	dir := j.spoolDir()
	files, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // nearly always: one failed open, on every record
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", dir, err)
	}
	for _, f := range files {
		path := filepath.Join(dir, f.Name())
		switch {
		case strings.HasPrefix(f.Name(), partPrefix):
			if info, err := f.Info(); err == nil && time.Since(info.ModTime()) > partLifetime {
				os.Remove(path)
			}
		case strings.HasSuffix(f.Name(), spoolExt):
			if err := j.appendSpooled(db, path); err != nil {
				return err
			}
		}
	}
	return nil
}

// appendSpooled appends one spool file and removes it, or sets it aside as refused.
func (j *Journal) appendSpooled(db *bolt.DB, path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	var call spooledCall
	err = json.Unmarshal(data, &call)
	if err == nil {
		err = db.Update(func(tx *bolt.Tx) error {
			if err := ensureBuckets(tx); err != nil {
				return err
			}
			entries, err := decodeSpooled(call.Entries)
			if err != nil {
				return err
			}
			_, err = appendAll(tx, Entries(entries), AppendOptions{Now: call.Now, IdleGap: call.IdleGap, Elsewhere: call.Elsewhere})
			return err
		})
	}
	if err != nil {
		if failure := j.classify(err); errors.Is(failure, ErrReadOnly) || errors.Is(failure, ErrDiskFull) {
			return failure // the disk's, not the file's: it stays for the next write
		}
		return os.Rename(path, strings.TrimSuffix(path, spoolExt)+refusedExt)
	}
	failpoint.Hit("spool-appended")
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func decodeSpooled(raws []json.RawMessage) ([]memory.Entry, error) {
	entries := make([]memory.Entry, len(raws))
	for i, raw := range raws {
		if err := json.Unmarshal(raw, &entries[i]); err != nil {
			return nil, fmt.Errorf("spooled entry %d: %w", i+1, err)
		}
	}
	return entries, nil
}

// Spooled counts the calls kept aside that wait for the next write to the journal, and
// those set aside as refused (*.refused in .agmem/spool/).
func (j *Journal) Spooled() (waiting, refused int, err error) {
	files, err := os.ReadDir(j.spoolDir())
	if errors.Is(err, fs.ErrNotExist) {
		return 0, 0, nil
	}
	for _, f := range files {
		switch {
		case strings.HasPrefix(f.Name(), partPrefix):
		case strings.HasSuffix(f.Name(), spoolExt):
			waiting++
		case strings.HasSuffix(f.Name(), refusedExt):
			refused++
		}
	}
	return waiting, refused, err
}

// Drain appends what calls kept aside, as every write does first.
func (j *Journal) Drain() error { return j.update(func(*bolt.Tx) error { return nil }) }
