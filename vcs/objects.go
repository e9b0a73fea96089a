package vcs

import (
	"bytes"
	"errors"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// objectStore is go-git's storage with packed objects read by agmem (findPacked,
// resolve): every commit and tree go-git's object package reads for agmem goes through
// it. Loose objects, and what agmem cannot read, are go-git's.
type objectStore struct {
	*filesystem.Storage
	r *Git
}

func (s objectStore) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	o, err := s.encodedObject(t, h)
	if errors.Is(err, dotgit.ErrPackfileNotFound) {
		// A pack listed before was merged into another since (a flush's MergePacks, git
		// gc): the packs are listed again, and the object read where it is now.
		s.r.reindex()
		o, err = s.encodedObject(t, h)
	}
	return o, err
}

func (s objectStore) encodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	o, ok, err := s.r.packedObject(h)
	if err != nil {
		return nil, err
	}
	if !ok {
		return s.r.goGitObject(t, h)
	}
	if t != plumbing.AnyObject && o.typ != t {
		return nil, plumbing.ErrObjectNotFound // as go-git answers
	}
	return readObject{h, o}, nil
}

// goGitObject is object h as go-git's storage reads it, whole: one at a time, since
// go-git builds its packs' indexes and reads a packed object's bytes from its pack with
// no lock, and agmem reads git on more than one goroutine (a search's snippets).
func (r *Git) goGitObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	r.goGit.Lock()
	defer r.goGit.Unlock()
	o, err := r.st.Storage.EncodedObject(t, h)
	if _, whole := o.(*plumbing.MemoryObject); err != nil || whole {
		return o, err
	}
	rd, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	m := &plumbing.MemoryObject{}
	m.SetType(o.Type())
	if _, err := io.Copy(m, rd); err != nil {
		return nil, err
	}
	return m, nil
}

// readObject is an object read from a pack, whose id is known: go-git's MemoryObject
// would hash it again.
type readObject struct {
	h plumbing.Hash
	unpackedObject
}

var errReadOnly = errors.New("an object read from a pack cannot be changed")

func (o readObject) Hash() plumbing.Hash         { return o.h }
func (o readObject) Type() plumbing.ObjectType   { return o.typ }
func (o readObject) SetType(plumbing.ObjectType) {}
func (o readObject) Size() int64                 { return int64(len(o.data)) }
func (o readObject) SetSize(int64)               {}
func (o readObject) Reader() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(o.data)), nil
}
func (o readObject) Writer() (io.WriteCloser, error) { return nil, errReadOnly }
