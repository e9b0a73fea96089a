package fulltext

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agmem/agmem/internal/atomicfile"
)

// A Doc is a document to index: the caller's id of it, the text of each of the index's
// fields, its time, and its value of each of the index's keys.
type Doc struct {
	ID     int64
	Fields []string
	Time   int64
	Keys   []string
}

// A Builder gathers documents in memory and writes them as one segment file. Its memory
// grows with what it holds: Bytes tells about how much, for a caller that writes a
// segment every so often.
type Builder struct {
	fields, keys int
	ids, times   []int64
	norms        [][]uint8 // by field, by document
	codes        [][]uint32
	dicts        []map[string]uint32
	values       [][]string // each key's values, by code
	totals       []uint64
	terms        map[string]*termBuild
	names        []named
	bytes        int
	// The document being added: its terms, each one's positions by field.
	inDoc   []docTerm
	lengths []uint32
}

type docTerm struct {
	tb  *termBuild
	pos [MaxFields][]uint32
}

// termBuild is a term's postings as they grow.
type termBuild struct {
	df       uint32
	last     int64 // the last document that holds it; -1 before the first
	postings []byte
	pos      []byte
	blocks   []blockEntry
	open     blockEntry // the block being filled: its bounds so far
	// Where the document being added is in Builder.inDoc, while it holds the term: in
	// the document numbered adding-1.
	adding int64
	at     int
}

// NewBuilder starts a segment of documents with fields text fields and keys keys.
func NewBuilder(fields, keys int) *Builder {
	if fields < 1 || fields > MaxFields {
		panic(fmt.Sprintf("fulltext: %d fields", fields))
	}
	b := &Builder{fields: fields, keys: keys, norms: make([][]uint8, fields), codes: make([][]uint32, keys),
		dicts: make([]map[string]uint32, keys), values: make([][]string, keys), totals: make([]uint64, fields),
		terms: map[string]*termBuild{}, lengths: make([]uint32, fields)}
	for k := range b.dicts {
		b.dicts[k] = map[string]uint32{}
	}
	return b
}

// Len is how many documents the builder holds.
func (b *Builder) Len() int { return len(b.ids) }

// Bytes is about how many bytes of memory the builder's postings and names take.
func (b *Builder) Bytes() int { return b.bytes }

// Name gives id a name that Segment.Named finds it by. An id may have several names,
// and many ids one; the id need not be a document's.
func (b *Builder) Name(name uint64, id int64) {
	b.names = append(b.names, named{name, id})
	b.bytes += 16
}

// Names is how many names the builder holds.
func (b *Builder) Names() int { return len(b.names) }

// Add adds a document. Its fields and keys must be as many as the builder's.
func (b *Builder) Add(d Doc) {
	if len(d.Fields) != b.fields || len(d.Keys) != b.keys {
		panic(fmt.Sprintf("fulltext: a document of %d fields and %d keys, want %d and %d", len(d.Fields), len(d.Keys), b.fields, b.keys))
	}
	ord := int64(len(b.ids))
	b.ids, b.times = append(b.ids, d.ID), append(b.times, d.Time)
	for k, v := range d.Keys {
		code, ok := b.dicts[k][v]
		if !ok {
			code = uint32(len(b.values[k]))
			v = strings.Clone(v)
			b.dicts[k][v], b.values[k] = code, append(b.values[k], v)
		}
		b.codes[k] = append(b.codes[k], code)
	}
	// One lookup of each term where it is: among the builder's terms, each of which
	// says where it is among the document's while the document holds it.
	b.inDoc = b.inDoc[:0]
	for f, text := range d.Fields {
		n := uint32(0)
		Terms(text, func(t string, _, _ int) bool {
			tb := b.terms[t]
			if tb == nil {
				tb = &termBuild{last: -1}
				tb.open.minNorm = fieldBytesMax
				b.terms[strings.Clone(t)] = tb
				b.bytes += len(t) + 128
			}
			if tb.adding != ord+1 {
				tb.adding, tb.at = ord+1, len(b.inDoc)
				if tb.at < cap(b.inDoc) {
					b.inDoc = b.inDoc[:tb.at+1]
					dt := &b.inDoc[tb.at]
					dt.tb = tb
					for g := range dt.pos {
						dt.pos[g] = dt.pos[g][:0]
					}
				} else {
					b.inDoc = append(b.inDoc, docTerm{tb: tb})
				}
			}
			b.inDoc[tb.at].pos[f] = append(b.inDoc[tb.at].pos[f], n)
			n++
			return true
		})
		b.lengths[f] = n
		b.totals[f] += uint64(n)
	}
	var norms [MaxFields]uint8
	for f, n := range b.lengths {
		norms[f] = normByte(n)
		b.norms[f] = append(b.norms[f], norms[f])
	}
	for i := range b.inDoc {
		dt := &b.inDoc[i]
		before := len(dt.tb.postings) + len(dt.tb.pos)
		dt.tb.add(ord, dt, &norms, b.fields)
		b.bytes += len(dt.tb.postings) + len(dt.tb.pos) - before
	}
}

// add appends document ord to the term's postings.
func (tb *termBuild) add(ord int64, dt *docTerm, norms *[MaxFields]uint8, fields int) {
	delta := uint64(ord-tb.last) << 3
	tb.last = ord
	mask, field := byte(0), 0
	for f := range fields {
		if len(dt.pos[f]) > 0 {
			mask |= 1 << f
			field = f
		}
	}
	many := false
	switch n := len(dt.pos[field]); {
	case mask == 1<<field && n == 1:
		tb.postings = binary.AppendUvarint(tb.postings, delta|uint64(field))
	case mask == 1<<field && fields < manyFields:
		tb.postings = binary.AppendUvarint(binary.AppendUvarint(tb.postings, delta|uint64(fields)),
			uint64((n-2)*fields+field))
	default:
		tb.postings = append(binary.AppendUvarint(tb.postings, delta|manyFields), mask)
		many = true
	}
	for f := range fields {
		ps := dt.pos[f]
		if len(ps) == 0 {
			continue
		}
		if many {
			tb.postings = binary.AppendUvarint(tb.postings, uint64(len(ps)))
		}
		prev := uint32(0)
		for _, p := range ps {
			tb.pos = binary.AppendUvarint(tb.pos, uint64(p-prev))
			prev = p
		}
		tb.open.maxTF[f] = max(tb.open.maxTF[f], uint8(min(len(ps), math.MaxUint8)))
		tb.open.minNorm[f] = min(tb.open.minNorm[f], norms[f])
	}
	tb.df++
	if tb.df%blockSize == 0 {
		tb.closeBlock()
	}
}

// closeBlock ends the block being filled.
func (tb *termBuild) closeBlock() {
	e := tb.open
	e.last, e.end, e.posEnd = uint32(tb.last), uint32(len(tb.postings)), uint32(len(tb.pos))
	tb.blocks = append(tb.blocks, e)
	tb.open = blockEntry{minNorm: fieldBytesMax}
}

// Write writes the builder's documents as a segment file at path: written to a file
// beside it, synced, and renamed, so that path holds a whole segment or nothing.
func (b *Builder) Write(path string) error {
	w, err := newSegmentWriter(filepath.Dir(path), b.fields)
	if err != nil {
		return err
	}
	defer w.discard()
	terms := make([]string, 0, len(b.terms))
	for t := range b.terms {
		terms = append(terms, t)
	}
	slices.Sort(terms)
	for _, t := range terms {
		if err := w.term(t, b.terms[t]); err != nil {
			return err
		}
	}
	return w.finish(path, &columns{ids: b.ids, times: b.times, norms: b.norms, codes: b.codes,
		values: b.values, totals: b.totals, names: b.names})
}

// columns are a segment's documents apart from their terms: by document number, their
// ids, times, norms (by field) and key codes (by key), each key's values by code, and
// each field's terms over all of them; and the names of ids.
type columns struct {
	ids, times []int64
	norms      [][]uint8
	codes      [][]uint32
	values     [][]string
	totals     []uint64
	names      []named
}

// named is an id's name (Builder.Name).
type named struct {
	name uint64
	id   int64
}

// segmentWriter writes a segment file: terms in byte order, each with its blocks and
// positions, which go to two files beside it until finish puts the segment together,
// so that a merge of large segments holds one term at a time.
type segmentWriter struct {
	dir                 string
	fields              int
	postings, positions *spill
	records             []byte // the terms section
	pool                []byte
}

// spill is a file that takes bytes until they are copied into a segment.
type spill struct {
	f *os.File
	w *bufio.Writer
	n uint64
}

func newSpill(dir string) (*spill, error) {
	f, err := os.CreateTemp(dir, ".spill-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name()) // gone with its process, whatever happens
	return &spill{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

func (s *spill) write(p []byte) error {
	n, err := s.w.Write(p)
	s.n += uint64(n)
	return err
}

func newSegmentWriter(dir string, fields int) (*segmentWriter, error) {
	w := &segmentWriter{dir: dir, fields: fields}
	var err error
	if w.postings, err = newSpill(dir); err != nil {
		return nil, err
	}
	if w.positions, err = newSpill(dir); err != nil {
		w.postings.f.Close()
		return nil, err
	}
	return w, nil
}

// discard lets go of the writer's files.
func (w *segmentWriter) discard() {
	w.postings.f.Close()
	w.positions.f.Close()
}

// term adds a term, after every term before it in byte order, and its postings.
func (w *segmentWriter) term(t string, tb *termBuild) error {
	if tb.df%blockSize != 0 {
		tb.closeBlock()
	}
	if len(w.pool) > math.MaxUint32-MaxTermBytes {
		return fmt.Errorf("fulltext: a segment's terms take more than it can hold")
	}
	r := termRecord{pool: uint32(len(w.pool)), df: tb.df, postings: w.postings.n, positions: w.positions.n}
	w.records = r.append(w.records)
	w.pool = append(append(w.pool, byte(len(t))), t...)
	if len(tb.blocks) > 1 { // one block ends where the next term begins
		var index []byte
		for i := range tb.blocks {
			index = tb.blocks[i].append(index, w.fields)
		}
		if err := w.postings.write(index); err != nil {
			return err
		}
	}
	if err := w.postings.write(tb.postings); err != nil {
		return err
	}
	return w.positions.write(tb.pos)
}

// finish writes the segment at path: written beside it, synced, and renamed.
func (w *segmentWriter) finish(path string, c *columns) error {
	return atomicfile.Write(path, ".segment-*", 0o600, func(bw *bufio.Writer) error {
		return w.write(&countingWriter{w: bw}, c)
	})
}

type countingWriter struct {
	w   *bufio.Writer
	n   uint64
	err error
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += uint64(n)
	c.err = err
	return n, err
}

func (w *segmentWriter) write(out *countingWriter, c *columns) error {
	docs := len(c.ids)
	f := &footer{fields: uint32(w.fields), keys: uint32(len(c.values)), docs: uint32(docs), totals: c.totals,
		terms: uint32(len(w.records) / termRecordSize)}
	out.Write(magic[:])
	section := func(i int, write func() error) error {
		f.off[i] = out.n
		err := write()
		f.len[i] = out.n - f.off[i]
		return cmp.Or(err, out.err)
	}
	var buf []byte
	for _, values := range c.values {
		f.widths = append(f.widths, codeWidth(len(values)))
	}
	err := errors.Join(
		section(secIDs, func() error { _, err := out.Write(appendIDs(nil, c.ids)); return err }),
		section(secTimes, func() error {
			for _, t := range c.times {
				buf = binary.LittleEndian.AppendUint64(buf[:0], uint64(t))
				out.Write(buf)
			}
			return nil
		}),
		section(secNorms, func() error {
			for _, n := range c.norms {
				out.Write(n)
			}
			return nil
		}),
		section(secKeys, func() error {
			for k, codes := range c.codes {
				buf = buf[:0]
				for _, code := range codes {
					buf = appendCode(buf, code, f.widths[k])
				}
				out.Write(buf)
			}
			return nil
		}),
		section(secDicts, func() error {
			for _, values := range c.values {
				buf = binary.AppendUvarint(buf[:0], uint64(len(values)))
				for _, v := range values {
					buf = binary.AppendUvarint(buf, uint64(len(v)))
					buf = append(buf, v...)
				}
				out.Write(buf)
			}
			return nil
		}),
		section(secNames, func() error {
			slices.SortFunc(c.names, func(a, b named) int { return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.id, b.id)) })
			buf = binary.LittleEndian.AppendUint64(buf[:0], uint64(len(c.names)))
			ids := make([]int64, len(c.names))
			for i, n := range c.names {
				buf, ids[i] = binary.LittleEndian.AppendUint64(buf, n.name), n.id
			}
			_, err := out.Write(appendIDs(buf, ids))
			return err
		}),
		section(secTerms, func() error { _, err := out.Write(w.records); return err }),
		section(secPool, func() error { _, err := out.Write(w.pool); return err }),
		section(secPostings, func() error { return w.postings.copyTo(out) }),
		section(secPositions, func() error { return w.positions.copyTo(out) }),
	)
	if err != nil {
		return err
	}
	out.Write(f.append(nil))
	if out.err != nil {
		return out.err
	}
	return out.w.Flush()
}

// copyTo copies what the spill took.
func (s *spill) copyTo(out io.Writer) error {
	if err := s.w.Flush(); err != nil {
		return err
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	n, err := io.Copy(out, s.f)
	if err == nil && uint64(n) != s.n {
		err = fmt.Errorf("fulltext: %d bytes spilled, %d read back", s.n, n)
	}
	return err
}

// codeWidth is the bytes a key's codes take, for a dictionary of n values.
func codeWidth(n int) uint8 {
	switch {
	case n <= 1<<8:
		return 1
	case n <= 1<<16:
		return 2
	}
	return 4
}

func appendCode(b []byte, c uint32, width uint8) []byte {
	switch width {
	case 1:
		return append(b, byte(c))
	case 2:
		return binary.LittleEndian.AppendUint16(b, uint16(c))
	}
	return binary.LittleEndian.AppendUint32(b, c)
}
