package vcs

import (
	"bufio"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// writePack stores objects as one pack file and its index in .git/objects/pack, in one
// pass: each object is compressed once, and the index is built from the offsets and
// checksums noted while writing rather than by reading the pack back. Objects are stored
// whole (no deltas) at zlib's fastest level: a flush's objects are new small files and
// the trees above them, and git gc repacks them tighter whenever a person likes.
func (r *Repo) writePack(st storer.EncodedObjectStorer, hashes []plumbing.Hash) (string, error) {
	// An object twice in one pack makes git refuse the whole pack: its header would count
	// more objects than its index.
	hashes = dedupe(hashes)
	dir := filepath.Join(r.gitDir, "objects", "pack")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, "tmp_pack_") // git gc removes what a crash leaves
	if err != nil {
		return "", fmt.Errorf("write pack: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename below, this removes nothing

	idx := new(idxfile.Writer)
	sum, err := encodePack(tmp, st, hashes, idx)
	if err == nil {
		err = tmp.Sync() // the journal will count these objects as committed
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("write pack: %w", err)
	}
	base := filepath.Join(dir, "pack-"+hex.EncodeToString(sum))
	// The .idx goes in place first. A process killed between the two renames leaves an
	// .idx without its .pack, which git and go-git both pass over; go-git cannot open a
	// repository holding a .pack without its .idx.
	mi, err := idx.Index()
	if err != nil {
		return "", fmt.Errorf("write pack index: %w", err)
	}
	if err := writeFileAtomic(base+".idx", func(w io.Writer) error {
		_, err := idxfile.NewEncoder(w).Encode(mi)
		return err
	}); err != nil {
		return "", fmt.Errorf("write pack index: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o444); err != nil { // git's packs are read-only
		return "", fmt.Errorf("write pack: %w", err)
	}
	if err := os.Rename(tmp.Name(), base+".pack"); err != nil {
		return "", fmt.Errorf("write pack: %w", err)
	}
	r.st.Reindex()
	return base, syncDir(dir)
}

// encodePack writes the pack format (version 2): a header, each object's type and size
// then its zlib stream, and the SHA-1 of all of it, which it returns.
func encodePack(f io.Writer, st storer.EncodedObjectStorer, hashes []plumbing.Hash, idx *idxfile.Writer) ([]byte, error) {
	sum := sha1.New()
	bw := bufio.NewWriterSize(io.MultiWriter(f, sum), 1<<20)
	w := &countingWriter{w: bw}
	header := []byte("PACK\x00\x00\x00\x02")
	header = binary.BigEndian.AppendUint32(header, uint32(len(hashes)))
	if _, err := w.Write(header); err != nil {
		return nil, err
	}
	if err := idx.OnHeader(uint32(len(hashes))); err != nil {
		return nil, err
	}
	zw, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
	crc := crc32.NewIEEE()
	for _, h := range hashes {
		obj, err := st.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return nil, fmt.Errorf("object %s: %w", h, err)
		}
		pos := w.n
		crc.Reset()
		w.tee = crc
		if _, err := w.Write(objectHeader(obj.Type(), obj.Size())); err != nil {
			return nil, err
		}
		rd, err := obj.Reader()
		if err != nil {
			return nil, err
		}
		zw.Reset(w)
		_, err = io.Copy(zw, rd)
		rd.Close()
		if err == nil {
			err = zw.Close()
		}
		if err != nil {
			return nil, err
		}
		w.tee = nil
		idx.Add(h, uint64(pos), crc.Sum32())
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	packSum := sum.Sum(nil)
	if _, err := f.Write(packSum); err != nil {
		return nil, err
	}
	if err := idx.OnFooter(plumbing.Hash(packSum)); err != nil {
		return nil, err
	}
	return packSum, nil
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

// writeFileAtomic writes a read-only file under a temporary name, syncs it and renames
// it into place, so that a reader sees all of it or nothing.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "tmp_idx_") // git gc removes what a crash leaves
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	bw := bufio.NewWriter(tmp)
	if err := write(bw); err != nil {
		tmp.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o444); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Packs pile up, one a flush. Past maxPacks of them, lookups slow down, so they are
// merged as git gc --auto would, geometrically: a pack at least twice the size of all
// smaller ones together is kept, and all packs smaller than it are merged into one, so
// that an object is rewritten a few times in its life, not once every few flushes.
// Merging does no delta search: go-git's took seconds for tens of thousands of objects,
// under the flush lock. git gc compresses a memory repo as it does any other.
const maxPacks = 16

// MergePacks merges packs once there are more than maxPacks of them (see maxPacks). The
// old packs go only once the new one is on disk. Call it under the writer lock, once
// git's own locks are released: it changes nothing that git commands wait for.
func (r *Repo) MergePacks() error {
	dir := filepath.Join(r.gitDir, "objects", "pack")
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
	var hashes []plumbing.Hash
	for _, p := range merge {
		hs, err := packHashes(p.base + ".idx")
		if err != nil {
			return err
		}
		hashes = append(hashes, hs...)
	}
	// writePack syncs the merged pack before it returns: only then do the old ones go.
	merged, err := r.writePack(r.st, hashes)
	if err != nil {
		return fmt.Errorf("merge packs: %w", err)
	}
	for _, p := range merge {
		if p.base != merged { // the same objects in the same order make the same name
			os.Remove(p.base + ".pack") // the .pack first: an .idx alone is passed over
			os.Remove(p.base + ".idx")
		}
	}
	r.st.Reindex()
	return nil
}

// packFile is a pack in objects/pack: its path without extension, and its size.
type packFile struct {
	base string
	size int64
}

// listPacks lists the packs that have both their .pack and their .idx.
func listPacks(dir string) ([]packFile, error) {
	names, err := filepath.Glob(filepath.Join(dir, "pack-*.idx"))
	if err != nil {
		return nil, err
	}
	var packs []packFile
	for _, idxPath := range names {
		base := strings.TrimSuffix(idxPath, ".idx")
		if fi, err := os.Stat(base + ".pack"); err == nil {
			packs = append(packs, packFile{base, fi.Size()})
		}
	}
	return packs, nil
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

// packHashes lists the objects a pack index names.
func packHashes(idxPath string) ([]plumbing.Hash, error) {
	f, err := os.Open(idxPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	idx := idxfile.NewMemoryIndex()
	if err := idxfile.NewDecoder(bufio.NewReader(f)).Decode(idx); err != nil {
		return nil, fmt.Errorf("read %s: %w", idxPath, err)
	}
	entries, err := idx.Entries()
	if err != nil {
		return nil, err
	}
	defer entries.Close()
	var out []plumbing.Hash
	for {
		e, err := entries.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, e.Hash)
	}
}
