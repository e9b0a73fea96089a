package vcs

import (
	"bufio"
	"cmp"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/agmem/agmem/internal/atomicfile"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/klauspost/compress/zlib"
)

// writePack stores objects as one pack file and its index in .git/objects/pack, in one
// pass: each object is compressed once, and the index is built from the offsets and
// checksums noted while writing rather than by reading the pack back. Objects are stored
// as objectOf gives them, whole or as a delta against one before them, at zlib's fastest
// level: a flush's objects are new small files and the trees above them, and git gc
// repacks them tighter whenever a person likes. klauspost/compress deflates them, as it
// inflates blobs (blob.go): faster than compress/flate at that level.
func (r *Git) writePack(hashes []plumbing.Hash, objectOf func(plumbing.Hash) (stagedObject, error)) (string, error) {
	// An object twice in one pack makes git refuse the whole pack: its header would count
	// more objects than its index.
	hashes = dedupe(hashes)
	pw, err := r.newPackWriter(len(hashes))
	if err != nil {
		return "", fmt.Errorf("write pack: %w", err)
	}
	defer pw.abandon()
	for _, h := range hashes {
		o, err := objectOf(h)
		if err == nil {
			err = pw.add(h, o)
		}
		if err != nil {
			return "", fmt.Errorf("write pack: object %s: %w", h, err)
		}
	}
	return pw.finish()
}

// tempPrefix starts the names of the files a pack is written under before it is put
// in place. They are agmem's own, so that agmem can remove what a killed process left
// (git gc removes them too: they start with "tmp_").
const tempPrefix = "tmp_agmem_"

// packWriter writes the pack format (version 2): a header, each object's type and size
// then its zlib stream, and the SHA-1 of all of it. Into a temporary file
// (newPackWriter), building the pack's index on the way; or into a stream
// (newPackStream), whose reader indexes it.
type packWriter struct {
	r   *Git
	dir string
	tmp *os.File // nil for a stream
	out io.Writer
	bw  *bufio.Writer
	sum hash.Hash
	w   *countingWriter // into bw and sum; into crc too while an entry is written
	crc hash.Hash32
	zw  *zlib.Writer
	idx *idxfile.Writer         // nil for a stream
	at  map[plumbing.Hash]int64 // where each object written so far starts
}

func (r *Git) newPackWriter(count int) (*packWriter, error) {
	dir := filepath.Join(r.gitDir, "objects", "pack")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(dir, tempPrefix+"pack_")
	if err != nil {
		return nil, err
	}
	pw := &packWriter{r: r, dir: dir, tmp: tmp, idx: new(idxfile.Writer)}
	if err := pw.start(tmp, count); err != nil {
		pw.abandon()
		return nil, err
	}
	if err := pw.idx.OnHeader(uint32(count)); err != nil {
		pw.abandon()
		return nil, err
	}
	return pw, nil
}

// newPackStream writes a pack of count objects into out; end ends it.
func (r *Git) newPackStream(out io.Writer, count int) (*packWriter, error) {
	pw := &packWriter{r: r}
	return pw, pw.start(out, count)
}

// start writes the pack's header into out.
func (pw *packWriter) start(out io.Writer, count int) error {
	pw.out, pw.sum, pw.crc = out, sha1.New(), crc32.NewIEEE()
	pw.at = make(map[plumbing.Hash]int64, count)
	pw.bw = bufio.NewWriterSize(io.MultiWriter(out, pw.sum), 1<<20)
	pw.w = &countingWriter{w: pw.bw}
	pw.zw, _ = zlib.NewWriterLevel(nil, zlib.BestSpeed)
	_, err := pw.w.Write(binary.BigEndian.AppendUint32([]byte("PACK\x00\x00\x00\x02"), uint32(count)))
	return err
}

// end writes what is buffered and the pack's checksum, which it returns.
func (pw *packWriter) end() ([]byte, error) {
	if err := pw.bw.Flush(); err != nil {
		return nil, err
	}
	sum := pw.sum.Sum(nil)
	_, err := pw.out.Write(sum)
	return sum, err
}

// add compresses o into the pack; a delta's base must be in the pack already.
func (pw *packWriter) add(h plumbing.Hash, o stagedObject) error {
	pos := pw.w.n
	header := objectHeader(o.typ, int64(len(o.data)))
	if !o.base.IsZero() {
		basePos, ok := pw.at[o.base]
		if !ok {
			return fmt.Errorf("the base of a delta, %s, is not in the pack", o.base)
		}
		header = appendDeltaOffset(objectHeader(plumbing.OFSDeltaObject, int64(len(o.data))), pos-basePos)
	}
	pw.crc.Reset()
	pw.w.tee = pw.crc
	defer func() { pw.w.tee = nil }()
	if _, err := pw.w.Write(header); err != nil {
		return err
	}
	pw.zw.Reset(pw.w)
	if _, err := pw.zw.Write(o.data); err != nil {
		return err
	}
	if err := pw.zw.Close(); err != nil {
		return err
	}
	pw.note(h, pos, pw.crc.Sum32())
	return nil
}

// addEntry writes an entry of another pack as it is: header and compressed data.
func (pw *packWriter) addEntry(h plumbing.Hash, entry []byte, crc uint32) error {
	pos := pw.w.n
	if _, err := pw.w.Write(entry); err != nil {
		return err
	}
	pw.note(h, pos, crc)
	return nil
}

func (pw *packWriter) note(h plumbing.Hash, pos int64, crc uint32) {
	pw.at[h] = pos
	if pw.idx != nil {
		pw.idx.Add(h, uint64(pos), crc)
	}
}

// finish writes the pack's checksum, syncs the pack (the journal will count its objects
// as committed) and puts it in place with its index. It returns the pack's path without
// its extension.
func (pw *packWriter) finish() (string, error) {
	sum, err := pw.end()
	if err != nil {
		return "", fmt.Errorf("write pack: %w", err)
	}
	if err := pw.idx.OnFooter(plumbing.Hash(sum)); err != nil {
		return "", fmt.Errorf("write pack index: %w", err)
	}
	err = pw.tmp.Sync()
	if cerr := pw.tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("write pack: %w", err)
	}
	base := filepath.Join(pw.dir, "pack-"+hex.EncodeToString(sum))
	// The .idx goes in place first. A process killed between the two renames leaves an
	// .idx without its .pack, which git and go-git both pass over; go-git cannot open a
	// repository holding a .pack without its .idx.
	mi, err := pw.idx.Index()
	if err != nil {
		return "", fmt.Errorf("write pack index: %w", err)
	}
	if err := writeReadOnly(base+".idx", func(w *bufio.Writer) error {
		_, err := idxfile.NewEncoder(w).Encode(mi)
		return err
	}); err != nil {
		return "", fmt.Errorf("write pack index: %w", err)
	}
	if err := os.Chmod(pw.tmp.Name(), 0o444); err != nil { // git's packs are read-only
		return "", fmt.Errorf("write pack: %w", err)
	}
	if err := os.Rename(pw.tmp.Name(), base+".pack"); err != nil {
		return "", fmt.Errorf("write pack: %w", err)
	}
	pw.r.reindex()
	return base, syncDir(pw.dir)
}

// abandon removes the temporary file; after finish, it removes nothing. It is safe to defer.
func (pw *packWriter) abandon() {
	pw.tmp.Close()
	os.Remove(pw.tmp.Name())
}

// objectHeader is a pack entry's header: the type in bits 4-6 of the first byte, the
// size in its low 4 bits and then 7 bits a byte, high bit set while more follow.
func objectHeader(t plumbing.ObjectType, size int64) []byte {
	b := []byte{byte(t)<<4 | byte(size&0x0f)}
	for size >>= 4; size > 0; size >>= 7 {
		b[len(b)-1] |= 0x80
		b = append(b, byte(size&0x7f))
	}
	return b
}

// appendDeltaOffset appends how far back a delta's base starts, as git writes it: 7
// bits a byte, high first, high bit set while more follow, each byte but the last one
// less than its bits say.
func appendDeltaOffset(b []byte, offset int64) []byte {
	var enc [10]byte
	i := len(enc) - 1
	enc[i] = byte(offset & 0x7f)
	for offset >>= 7; offset > 0; offset >>= 7 {
		offset--
		i--
		enc[i] = 0x80 | byte(offset&0x7f)
	}
	return append(b, enc[i:]...)
}

// readDeltaOffset reads what appendDeltaOffset wrote, and how many bytes it took.
func readDeltaOffset(b []byte) (offset int64, n int, err error) {
	for n < len(b) && n < 10 {
		c := b[n]
		n++
		offset = offset<<7 | int64(c&0x7f)
		if c&0x80 == 0 {
			return offset, n, nil
		}
		offset++
	}
	return 0, 0, fmt.Errorf("bad delta offset")
}

// entryHeaderLen is the length of a pack entry's type and size header, and its type.
func entryHeaderLen(entry []byte) (plumbing.ObjectType, int, error) {
	for n, c := range entry {
		if c&0x80 == 0 {
			return plumbing.ObjectType(entry[0] >> 4 & 7), n + 1, nil
		}
	}
	return 0, 0, fmt.Errorf("bad entry header")
}

// countingWriter counts what it writes, and copies it to tee when tee is set.
type countingWriter struct {
	w   io.Writer
	tee hash.Hash32
	n   int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if c.tee != nil {
		c.tee.Write(p[:n])
	}
	return n, err
}

// writeReadOnly writes a file of git's, read-only as git makes them, whole or not at
// all, under a temporary name git's gc removes if a crash leaves it.
func writeReadOnly(path string, write func(*bufio.Writer) error) error {
	return atomicfile.Write(path, tempPrefix+"idx_", 0o444, write)
}

// Packs pile up, one a flush. Past maxPacks of them, lookups slow down, so they are
// merged as git gc --auto would, geometrically: a pack at least twice the size of all
// smaller ones together is kept, and all packs smaller than it are merged into one, so
// that an object is rewritten a few times in its life, not once every few flushes.
// Merging copies each object's entry as it is, compressed, deltas and all: it costs
// reading and writing the bytes, not inflating and deflating them (which took seconds
// for tens of thousands of objects, under the flush lock). git gc compresses a memory
// repo as it does any other.
const maxPacks = 16

// MergePacks merges packs once there are more than maxPacks of them (see maxPacks), and
// removes the temporary files of packs that killed agmem processes left. The old packs
// go only once the new one is on disk. Call it under the writer lock, once git's own
// locks are released: it changes nothing that git commands wait for.
func (r *Git) MergePacks() error {
	dir := filepath.Join(r.gitDir, "objects", "pack")
	// Under the writer lock, no other agmem process is writing one.
	if left, err := filepath.Glob(filepath.Join(dir, tempPrefix+"*")); err == nil {
		for _, name := range left {
			os.Remove(name)
		}
	}
	before, err := listPacks(dir)
	if err != nil || len(before) <= maxPacks {
		return err
	}
	merge := append([]packFile(nil), before...)
	sort.Slice(merge, func(i, j int) bool { return merge[i].size > merge[j].size })
	var rest int64
	for _, p := range merge {
		rest += p.size
	}
	for len(merge) > 2 {
		if rest -= merge[0].size; merge[0].size < 2*rest {
			break
		}
		merge = merge[1:] // big enough to keep
	}
	contents := make([][]idxfile.Entry, len(merge))
	unique := map[plumbing.Hash]bool{}
	for i, p := range merge {
		if contents[i], err = packEntries(p.base + ".idx"); err != nil {
			return err
		}
		for _, e := range contents[i] {
			unique[e.Hash] = true
		}
	}
	pw, err := r.newPackWriter(len(unique))
	if err != nil {
		return fmt.Errorf("merge packs: %w", err)
	}
	defer pw.abandon()
	for i, p := range merge {
		if err := copyEntries(pw, p.base+".pack", contents[i], copyRule{}); err != nil {
			return fmt.Errorf("merge packs: %w", err)
		}
	}
	// finish syncs the merged pack before it returns: only then do the old ones go.
	merged, err := pw.finish()
	if err != nil {
		return fmt.Errorf("merge packs: %w", err)
	}
	for _, p := range merge {
		if p.base != merged { // the same objects in the same order make the same name
			os.Remove(p.base + ".pack") // the .pack first: an .idx alone is passed over
			os.Remove(p.base + ".idx")
			// What git made beside a pack describes that pack alone.
			os.Remove(p.base + ".rev")
			os.Remove(p.base + ".bitmap")
		}
	}
	r.reindex()
	return nil
}

// copyEntries copies the entries of the pack file at path into pw, in the pack's
// order, each checked against its index's CRC: those rule wants, all of them where it
// says nothing. An object pw holds already is not copied again; a delta whose base
// moved gets the new distance to it. A delta whose base pw does not hold is written
// whole by rule.whole; with none, that is an error for an offset delta, and a
// reference delta is copied as it is (its base is in another pack).
func copyEntries(pw *packWriter, path string, entries []idxfile.Entry, rule copyRule) error {
	slices.SortFunc(entries, func(a, b idxfile.Entry) int { return cmp.Compare(a.Offset, b.Offset) })
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	rd := bufio.NewReaderSize(f, 1<<20)
	end := uint64(fi.Size()) - sha1.Size
	moved := make(map[uint64]int64, len(entries)) // offset in the pack: offset in pw
	var buf []byte
	at := uint64(0) // where rd is in the file
	for i, e := range entries {
		next := end
		if i+1 < len(entries) {
			next = entries[i+1].Offset
		}
		if next <= e.Offset || next > end {
			return fmt.Errorf("read %s: object %s has no room", path, e.Hash)
		}
		if pos, ok := pw.at[e.Hash]; ok {
			moved[e.Offset] = pos
			continue
		}
		if rule.want != nil && !rule.want(e.Hash) {
			continue
		}
		if gap := e.Offset - at; gap > uint64(rd.Size()) { // entries not wanted: passed over
			if _, err := f.Seek(int64(e.Offset), io.SeekStart); err != nil {
				return fmt.Errorf("read %s: %w", path, err)
			}
			rd.Reset(f)
		} else if _, err := rd.Discard(int(gap)); err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		buf = slices.Grow(buf[:0], int(next-e.Offset))[:next-e.Offset]
		if _, err := io.ReadFull(rd, buf); err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		at = next
		if crc32.ChecksumIEEE(buf) != e.CRC32 {
			return fmt.Errorf("read %s: object %s is damaged (CRC mismatch)", path, e.Hash)
		}
		t, n, err := entryHeaderLen(buf)
		if err != nil {
			return fmt.Errorf("read %s: object %s: %w", path, e.Hash, err)
		}
		entry, crc := buf, e.CRC32
		switch t {
		case plumbing.OFSDeltaObject:
			back, m, err := readDeltaOffset(buf[n:])
			if err != nil {
				return fmt.Errorf("read %s: object %s: %w", path, e.Hash, err)
			}
			basePos, ok := moved[e.Offset-uint64(back)]
			switch {
			case ok:
				entry = appendDeltaOffset(slices.Clone(buf[:n]), pw.w.n-basePos)
				entry = append(entry, buf[n+m:]...)
				crc = crc32.ChecksumIEEE(entry)
			case rule.whole == nil:
				return fmt.Errorf("read %s: the base of %s is not an object before it", path, e.Hash)
			default:
				entry = nil
			}
		case plumbing.REFDeltaObject:
			if len(buf) < n+sha1.Size {
				return fmt.Errorf("read %s: object %s: a delta cut short", path, e.Hash)
			}
			if _, ok := pw.at[plumbing.Hash(buf[n:n+sha1.Size])]; !ok && rule.whole != nil {
				entry = nil
			}
		}
		pos := pw.w.n
		if entry == nil {
			err = rule.whole(e.Hash)
		} else {
			err = pw.addEntry(e.Hash, entry, crc)
		}
		if err != nil {
			return err
		}
		moved[e.Offset] = pos
	}
	return nil
}

// copyRule says what copyEntries copies, and how it writes a delta it cannot copy.
type copyRule struct {
	want  func(plumbing.Hash) bool  // nil: every entry
	whole func(plumbing.Hash) error // nil: see copyEntries
}

// packFile is a pack in objects/pack: its path without extension, and its size.
type packFile struct {
	base string
	size int64
}

// listPacks lists the packs that have both their .pack and their .idx, and that git
// has not set apart: a .keep (a pack someone asked to keep, or one a fetch is still
// writing), a cruft pack's .mtimes (unreachable objects that git gc expires by their
// times), a .promisor (a partial clone's). Those are left as they are.
func listPacks(dir string) ([]packFile, error) {
	names, err := filepath.Glob(filepath.Join(dir, "pack-*.idx"))
	if err != nil {
		return nil, err
	}
	var packs []packFile
	for _, idxPath := range names {
		base := strings.TrimSuffix(idxPath, ".idx")
		if slices.ContainsFunc(setApart, func(ext string) bool { return exists(base + ext) }) {
			continue
		}
		if fi, err := os.Stat(base + ".pack"); err == nil {
			packs = append(packs, packFile{base, fi.Size()})
		}
	}
	return packs, nil
}

var setApart = []string{".keep", ".mtimes", ".promisor"}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// dedupe drops repeated hashes, keeping the first of each.
func dedupe(hashes []plumbing.Hash) []plumbing.Hash {
	seen := make(map[plumbing.Hash]bool, len(hashes))
	unique := hashes[:0:0]
	for _, h := range hashes {
		if !seen[h] {
			seen[h] = true
			unique = append(unique, h)
		}
	}
	return unique
}

// packEntries lists the objects a pack index names, with their offsets and CRCs.
func packEntries(idxPath string) ([]idxfile.Entry, error) {
	idx, err := readPackIdx(idxPath)
	if err != nil {
		return nil, err
	}
	return idx.entries()
}
