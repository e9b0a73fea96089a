package vcs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// OpenFile opens the file at path in commit h, to be read as a stream.
func (r *Git) OpenFile(h plumbing.Hash, file string) (io.ReadCloser, error) {
	t, err := r.treeAt(h, path.Dir(file))
	if err == nil && t == nil {
		err = object.ErrFileNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	e, err := t.FindEntry(path.Base(file))
	if errors.Is(err, object.ErrEntryNotFound) || err == nil && !e.Mode.IsFile() {
		err = object.ErrFileNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	rd, err := r.openBlob(e.Hash)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return rd, nil
}

// OpenBlob opens blob h, to be read as a stream.
func (r *Git) OpenBlob(h plumbing.Hash) (io.ReadCloser, error) { return r.openBlob(h) }

// ReadBlob reads blob h whole, into a buffer of its size where its header gives it: a
// buffer grown as it fills costs twice its pages, each a fault. A header is not
// trusted past maxPresized, which is more than agmem writes of a file (a session
// record's part is at most 10 MB): the stream's size check finds a lie. The bytes are
// not to be changed: a blob resolved from deltas is the one resolve keeps.
func (r *Git) ReadBlob(h plumbing.Hash) ([]byte, error) {
	rd, err := r.openBlob(h)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	if resolved, ok := rd.(resolvedBlob); ok {
		return resolved.data[:len(resolved.data):len(resolved.data)], nil // an append copies
	}
	var buf bytes.Buffer
	if b, ok := rd.(*blobStream); ok && b.left >= 0 && b.left <= maxPresized {
		buf.Grow(int(b.left) + bytes.MinRead) // and room to read its end
	}
	_, err = buf.ReadFrom(rd)
	return buf.Bytes(), err
}

const maxPresized = 64 << 20

// openBlob opens blob h as a stream. go-git reads an object whole into memory before it
// hands out a reader, inflating it a byte at a time through its pack scanner: for the
// megabytes of a session record, that was a copy of every byte and most of the time it
// took to read one. A blob a pack holds whole, as agmem writes them, or a loose one, is
// inflated here as it is read instead, and one a pack holds as a delta is resolved here
// (resolve); go-git reads what else there is (an alternate's).
func (r *Git) openBlob(h plumbing.Hash) (io.ReadCloser, error) {
	if rd, err := r.openPacked(h); rd != nil || err != nil {
		return rd, err
	}
	if rd, err := r.openLoose(h); rd != nil || err != nil {
		return rd, err
	}
	blob, err := object.GetBlob(r.st, h)
	if err != nil {
		return nil, err
	}
	return blob.Reader()
}

// openPacked opens blob h where a pack holds it, and returns a nil reader where none
// does.
func (r *Git) openPacked(h plumbing.Hash) (io.ReadCloser, error) {
	p, at, err := r.findPacked(h)
	if p == nil || err != nil {
		return nil, err
	}
	f, err := p.open()
	if err != nil {
		return nil, nil // gone since it was indexed: go-git has its say
	}
	var head [16]byte
	n, err := f.ReadAt(head[:], at)
	if n == 0 {
		return nil, fmt.Errorf("read %s: %w", p.path, err)
	}
	typ, size, hlen, err := entryHeader(head[:n])
	if err != nil {
		return nil, fmt.Errorf("read %s: object %s: %w", p.path, h, err)
	}
	switch typ {
	case plumbing.BlobObject:
		zr, err := newInflater(f, at+int64(hlen))
		if err != nil {
			return nil, fmt.Errorf("read %s: blob %s: %w", p.path, h, err)
		}
		return &blobStream{zr: zr, left: size, hash: h}, nil
	case plumbing.OFSDeltaObject, plumbing.REFDeltaObject:
		o, err := r.resolve(f, *p, at, 0)
		switch {
		case errors.Is(err, errOtherPack) || err == nil && o.typ != plumbing.BlobObject:
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("blob %s: %w", h, err)
		}
		return resolvedBlob{bytes.NewReader(o.data), o.data}, nil
	}
	return nil, nil
}

// resolvedBlob is a blob a pack holds as a delta, resolved whole, as a stream; ReadBlob
// hands out its bytes as they are, where a copy grown as it filled was a sixth of what
// a rebuild of the search index allocated.
type resolvedBlob struct {
	*bytes.Reader
	data []byte
}

func (resolvedBlob) Close() error { return nil }

// packedObject reads object h whole where a pack holds it; ok is false where none does
// (a loose object, or a delta against another pack's object), for go-git to read.
func (r *Git) packedObject(h plumbing.Hash) (o unpackedObject, ok bool, err error) {
	p, at, err := r.findPacked(h)
	if p == nil || err != nil {
		return o, false, err
	}
	f, err := p.open()
	if err != nil {
		return o, false, nil // gone since it was indexed
	}
	o, err = r.resolve(f, *p, at, 0)
	if errors.Is(err, errOtherPack) {
		return o, false, nil
	}
	if err != nil {
		return o, false, fmt.Errorf("object %s: %w", h, err)
	}
	return o, true, nil
}

// findPacked is the pack that holds object h and where, or a nil pack.
func (r *Git) findPacked(h plumbing.Hash) (*packIndex, int64, error) {
	packs, err := r.packs.load(filepath.Join(r.gitDir, "objects", "pack"))
	if err != nil {
		return nil, 0, err
	}
	for i := range packs {
		at, err := packs[i].idx.FindOffset(h)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			continue
		}
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", packs[i].path, err)
		}
		return &packs[i], at, nil
	}
	return nil, 0, nil
}

// PackedWithPrefix is the object a pack holds whose id starts with prefix (at least
// a byte), and whether there is exactly one: none where no pack holds such an object,
// or more than one does.
func (r *Git) PackedWithPrefix(prefix []byte) (plumbing.Hash, bool, error) {
	var h plumbing.Hash
	if len(prefix) == 0 || len(prefix) > len(h) {
		return h, false, nil
	}
	packs, err := r.packs.load(filepath.Join(r.gitDir, "objects", "pack"))
	if err != nil {
		return h, false, err
	}
	found := 0
	for i := range packs {
		first, n, err := packs[i].idx.withPrefix(prefix)
		if err != nil {
			return h, false, fmt.Errorf("%s: %w", packs[i].path, err)
		}
		switch {
		case n == 0:
		case found > 0 && first == h:
			found += n - 1 // the same object in two packs is one
		default:
			if found == 0 {
				h = first
			}
			found += n
		}
	}
	return h, found == 1, nil
}

// entryHeader reads a pack entry's type and size header (see objectHeader), and its
// length.
func entryHeader(b []byte) (t plumbing.ObjectType, size int64, n int, err error) {
	t, n, err = entryHeaderLen(b)
	if err != nil || n > 10 {
		return 0, 0, 0, fmt.Errorf("bad entry header")
	}
	size = int64(b[0] & 0x0f)
	for i, shift := 1, 4; i < n; i, shift = i+1, shift+7 {
		size |= int64(b[i]&0x7f) << shift
	}
	return t, size, n, nil
}

// openLoose opens blob h where it is a loose object, and returns a nil reader where it
// is none.
func (r *Git) openLoose(h plumbing.Hash) (io.ReadCloser, error) {
	f, err := os.Open(r.loosePath(h))
	if err != nil {
		return nil, nil // go-git has its say
	}
	zr, err := newInflater(f, 0)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("loose object %s: %w", h, err)
	}
	// Its header: "blob", a space, its size in decimal, a NUL.
	var head []byte
	for one := make([]byte, 1); len(head) <= len("blob ")+20; {
		if _, err = io.ReadFull(zr, one); err != nil || one[0] == 0 {
			break
		}
		head = append(head, one[0])
	}
	size, serr := strconv.ParseInt(strings.TrimPrefix(string(head), "blob "), 10, 64)
	if err != nil || serr != nil || !bytes.HasPrefix(head, []byte("blob ")) || size < 0 {
		zr.Close()
		f.Close()
		return nil, fmt.Errorf("loose object %s: not a blob's header: %q", h, head)
	}
	return &blobStream{f: f, zr: zr, left: size, hash: h}, nil
}

// loosePath is where object h is when it is a loose object.
func (r *Git) loosePath(h plumbing.Hash) string {
	hex := h.String()
	return filepath.Join(r.gitDir, "objects", hex[:2], hex[2:])
}

// blobStream is a blob inflated from its pack entry or loose object as it is read,
// checked against the size its header gives.
type blobStream struct {
	f    *os.File // a loose object's, closed with the stream; nil for a pack's (sharedPack)
	zr   io.ReadCloser
	left int64
	hash plumbing.Hash
}

// Read inflates the next bytes of the blob; a stream longer or shorter than the entry's
// size is an error, and one cut short is io.ErrUnexpectedEOF, as from any inflater.
func (b *blobStream) Read(p []byte) (int, error) {
	n, err := b.zr.Read(p)
	if b.left -= int64(n); b.left < 0 || err == io.EOF && b.left > 0 {
		return n, fmt.Errorf("blob %s: its size is not what its header says", b.hash)
	}
	return n, err
}

// Close closes the inflater and the object's file.
func (b *blobStream) Close() error {
	if b.zr == nil {
		return nil
	}
	b.zr.Close()
	b.zr = nil
	if b.f == nil {
		return nil
	}
	return b.f.Close()
}

// packIndexes are the indexes of the repository's packs, read once and again after
// agmem or git changed the packs (Git.reindex).
type packIndexes struct {
	mu    sync.Mutex
	packs []packIndex // nil: not read yet
}

type packIndex struct {
	path string // the .pack
	idx  *packIdx
	file *sharedPack
}

// sharedPack is a pack's file, opened when first read and shared by every read of the
// pack after (ReadAt only): opening it for each object was half of what an audit of a
// thousand commits took. A pack's file forgotten (packIndexes.forget) is closed once no
// reader holds it any longer, by os.File's own cleanup.
type sharedPack struct {
	mu sync.Mutex
	f  *os.File
}

// open is the pack's file, opened once; one that could not be opened (too many files
// open, for a moment) is tried again at the next read.
func (p packIndex) open() (*os.File, error) {
	p.file.mu.Lock()
	defer p.file.mu.Unlock()
	if p.file.f == nil {
		f, err := os.Open(p.path)
		if err != nil {
			return nil, err
		}
		p.file.f = f
	}
	return p.file.f, nil
}

// load returns the indexes of the packs in dir, reading them the first time.
func (c *packIndexes) load(dir string) ([]packIndex, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.packs != nil {
		return c.packs, nil
	}
	names, err := filepath.Glob(filepath.Join(dir, "pack-*.idx"))
	if err != nil {
		return nil, err
	}
	packs := []packIndex{}
	for _, name := range names {
		base := strings.TrimSuffix(name, ".idx")
		if !exists(base + ".pack") {
			continue // git and go-git pass over an .idx alone too
		}
		idx, err := readPackIdx(name)
		if err != nil {
			return nil, err
		}
		packs = append(packs, packIndex{base + ".pack", idx, &sharedPack{}})
	}
	c.packs = packs
	return packs, nil
}

// forget drops the indexes read: packs were added or removed.
func (c *packIndexes) forget() {
	c.mu.Lock()
	c.packs = nil
	c.mu.Unlock()
}
