package fulltext

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"syscall"
)

// A Segment is a segment file opened for searching: mapped, read only.
type Segment struct {
	data    []byte
	unmap   func() error
	f       *footer
	sec     [sections][]byte
	values  func() [][]string // each key's values, by code: read when first asked for
	dead    []bool            // by document number: dead, left out of searches; nil for none
	deadIDs int
	ids     idColumn // each document's
	names   []byte   // the names section's names, in order
	named   idColumn // their ids
}

// PathDamaged is err, said to be ErrDamaged when the path it was met on runs through a
// file or a loop of links, which no index of segments holds and a new one replaces.
func PathDamaged(err error) error {
	if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP) {
		return fmt.Errorf("%w: %w", ErrDamaged, err)
	}
	return err
}

// Open opens the segment file at path, refusing one that does not read as a segment
// (ErrDamaged), or that is no file: a directory, a pipe (opened without waiting for a
// writer, which would never come), a path through a file or a loop of links.
func Open(path string) (*Segment, error) {
	file, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, PathDamaged(err)
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w: not a file", path, ErrDamaged)
	}
	data, unmap, err := mapFile(file, int(fi.Size()))
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", path, err)
	}
	s, err := openBytes(data)
	if err != nil {
		unmap()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.unmap = unmap
	return s, nil
}

// openBytes reads a segment's bytes, checking every section's size against its counts.
func openBytes(data []byte) (s *Segment, err error) {
	defer recoverDamage(&err)
	f, err := readFooter(data)
	if err != nil {
		return nil, err
	}
	s = &Segment{data: data, f: f}
	for i := range sections {
		s.sec[i] = data[f.off[i] : f.off[i]+f.len[i]]
	}
	docs, keyBytes := uint64(f.docs), uint64(0)
	for _, w := range f.widths {
		keyBytes += docs * uint64(w)
	}
	var ok bool
	if s.ids, ok = readIDs(s.sec[secIDs], docs); !ok {
		return nil, ErrDamaged
	}
	if s.names, s.named, ok = readNames(s.sec[secNames]); !ok {
		return nil, ErrDamaged
	}
	if uint64(len(s.sec[secTimes])) != docs*8 ||
		uint64(len(s.sec[secNorms])) != docs*uint64(f.fields) || uint64(len(s.sec[secKeys])) != keyBytes ||
		uint64(len(s.sec[secTerms])) != uint64(f.terms)*termRecordSize {
		return nil, ErrDamaged
	}
	// The dictionaries are checked now, and read when a filter or a key first needs
	// them: a reader that needs none (agmem context) makes no string of them.
	if readDicts(s.sec[secDicts], int(f.keys), nil) != nil {
		return nil, ErrDamaged
	}
	s.values = sync.OnceValue(func() [][]string {
		values := make([][]string, f.keys)
		readDicts(s.sec[secDicts], int(f.keys), func(k int, v []byte) { values[k] = append(values[k], string(v)) })
		return values
	})
	return s, nil
}

// readDicts reads the dictionaries of keys keys, calling value with each key's values
// in order of their codes, when it is not nil; ErrDamaged if they do not read as such.
func readDicts(dicts []byte, keys int, value func(k int, v []byte)) error {
	for k := range keys {
		n, size := binary.Uvarint(dicts)
		if size <= 0 || n > uint64(len(dicts)) {
			return ErrDamaged
		}
		dicts = dicts[size:]
		for range n {
			l, size := binary.Uvarint(dicts)
			if size <= 0 || l > uint64(len(dicts)-size) {
				return ErrDamaged
			}
			if value != nil {
				value(k, dicts[size:size+int(l)])
			}
			dicts = dicts[size+int(l):]
		}
	}
	return nil
}

// recoverDamage turns a panic on a segment's bytes (a bound a damaged file breaks, or
// a fault on a mapped file cut short under it) into ErrDamaged.
func recoverDamage(err *error) {
	if r := recover(); r != nil {
		if _, runtime := r.(interface{ RuntimeError() }); !runtime {
			panic(r)
		}
		*err = fmt.Errorf("%w: %v", ErrDamaged, r)
	}
}

// Close unmaps the segment.
func (s *Segment) Close() error {
	if s.unmap == nil {
		return nil
	}
	err := s.unmap()
	s.unmap, s.data = nil, nil
	return err
}

// Docs is how many documents the segment holds, dead or not.
func (s *Segment) Docs() int { return int(s.f.docs) }

// ID is document n's id.
func (s *Segment) ID(n uint32) int64 { return s.ids.at(uint64(n)) }

// readNames reads a names section: its names, and their ids.
func readNames(b []byte) (names []byte, ids idColumn, ok bool) {
	if len(b) < 8 {
		return nil, ids, false
	}
	n := binary.LittleEndian.Uint64(b)
	if n > uint64(len(b)-8)/8 {
		return nil, ids, false
	}
	names = b[8 : 8+8*n]
	ids, ok = readIDs(b[8+8*n:], n)
	return names, ids, ok
}

// Named is the ids of the name, in order (Builder.Name); ErrDamaged if the file was
// cut short under its mapping.
func (s *Segment) Named(name uint64) (ids []int64, err error) {
	defer recoverDamage(&err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	n := uint64(len(s.names) / 8)
	nameAt := func(i uint64) uint64 { return binary.LittleEndian.Uint64(s.names[8*i:]) }
	i := uint64(sort.Search(int(n), func(i int) bool { return nameAt(uint64(i)) >= name }))
	for ; i < n && nameAt(i) == name; i++ {
		ids = append(ids, s.named.at(i))
	}
	return ids, nil
}

// eachName calls f with each name and its id, in order.
func (s *Segment) eachName(f func(name uint64, id int64)) {
	for i := range uint64(len(s.names) / 8) {
		f(binary.LittleEndian.Uint64(s.names[8*i:]), s.named.at(i))
	}
}

// Time is document n's time.
func (s *Segment) Time(n uint32) int64 {
	return int64(binary.LittleEndian.Uint64(s.sec[secTimes][8*n:]))
}

func (s *Segment) norm(field int, n uint32) uint8 { return s.sec[secNorms][uint32(field)*s.f.docs+n] }

// code is document n's code of key k.
func (s *Segment) code(k int, n uint32) uint32 {
	at := uint64(0)
	for i := range k {
		at += uint64(s.f.docs) * uint64(s.f.widths[i])
	}
	b := s.sec[secKeys][at:]
	switch w := s.f.widths[k]; w {
	case 1:
		return uint32(b[n])
	case 2:
		return uint32(binary.LittleEndian.Uint16(b[2*n:]))
	default:
		return binary.LittleEndian.Uint32(b[4*n:])
	}
}

// Key is document n's value of key k.
func (s *Segment) Key(k int, n uint32) string {
	c := s.code(k, n)
	if values := s.values()[k]; int(c) < len(values) {
		return values[c]
	}
	return ""
}

// Kill leaves the documents of ids out of every search of the segment from now on:
// indexed again elsewhere, or gone. It says how many of them the segment held.
func (s *Segment) Kill(ids map[int64]bool) int {
	if len(ids) == 0 {
		return 0
	}
	killed := 0
	for n := range s.f.docs {
		if ids[s.ID(n)] {
			if s.dead == nil {
				s.dead = make([]bool, s.f.docs)
			}
			if !s.dead[n] {
				s.dead[n] = true
				killed++
			}
		}
	}
	s.deadIDs += killed
	return killed
}

// Live is how many documents of the segment are not dead.
func (s *Segment) Live() int { return int(s.f.docs) - s.deadIDs }

func (s *Segment) isDead(n uint32) bool { return s.dead != nil && s.dead[n] }

// Terms is how many terms the segment holds.
func (s *Segment) Terms() int { return int(s.f.terms) }

func (s *Segment) record(i int) termRecord {
	return readTermRecord(s.sec[secTerms][i*termRecordSize:])
}

// term is the i-th term, in byte order.
func (s *Segment) term(i int) string {
	r := s.record(i)
	pool := s.sec[secPool]
	n := int(pool[r.pool])
	return string(pool[r.pool+1 : r.pool+1+uint32(n)])
}

// termBytes is the i-th term, without a copy: for comparing.
func (s *Segment) termBytes(i int) []byte {
	r := s.record(i)
	pool := s.sec[secPool]
	n := uint32(pool[r.pool])
	return pool[r.pool+1 : r.pool+1+n]
}

// find is the number of term t, or -1.
func (s *Segment) find(t string) int {
	i := s.from(t)
	if i < int(s.f.terms) && string(s.termBytes(i)) == t {
		return i
	}
	return -1
}

// from is the number of the first term not before t.
func (s *Segment) from(t string) int {
	return sort.Search(int(s.f.terms), func(i int) bool { return string(s.termBytes(i)) >= t })
}

// withPrefix are the numbers of the terms that start with prefix, at most max of them.
func (s *Segment) withPrefix(prefix string, max int) []int {
	var out []int
	for i := s.from(prefix); i < int(s.f.terms) && len(out) < max; i++ {
		if !strings.HasPrefix(string(s.termBytes(i)), prefix) {
			break
		}
		out = append(out, i)
	}
	return out
}

// df is how many documents hold term number i.
func (s *Segment) df(i int) uint32 { return s.record(i).df }

// totals are the terms of each field, over every document.
func (s *Segment) totals() []uint64 { return s.f.totals }
