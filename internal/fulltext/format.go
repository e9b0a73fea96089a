package fulltext

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"math/bits"
	"slices"
)

// A segment file, all numbers little-endian:
//
//	magic (8 bytes)
//	sections, in the order of the section constants below
//	footer: magic, version, fields, keys, docs, terms (uint32 each), then per section
//	its offset and length (uint64 each), the token total of each field (uint64 each),
//	each key's code width in bytes (one byte each), and the CRC-32 (IEEE) of
//	the footer before it (uint32); the footer's own length last (uint32)
//
// Sections:
//
//	ids       the caller's id of each document, by its number: the least of them (int64),
//	          then for each document its id less that, in 4 bytes where every one fits
//	          (agmem's ids are rows of a table, most of a segment's a few apart) or else 8;
//	          the section's length says which
//	times     docs × int64
//	norms     fields × docs bytes: each field's length in terms, as normByte quantizes it
//	keys      for each key, docs codes of its width: the document's value in the key's
//	          dictionary
//	dicts     for each key: a uvarint count, then each value as a uvarint length and
//	          its bytes, in code order
//	names     the caller's names of its ids, which need not be documents' (Builder.Name):
//	          how many (uint64), the names in order (uint64 each), then their ids as the
//	          ids section holds documents' (the least, then each less it)
//	terms     terms × termRecord, in byte order of the terms
//	pool      each term as a length byte and its bytes, where a termRecord points
//	postings  each term's blocks: its block index (blocks × blockEntry), then the blocks;
//	          a term of one block has no index, and its block ends where the next
//	          term's postings and positions begin, the last term's where their
//	          sections end (most terms are rare: their index was a twentieth of the
//	          file)
//	positions each term's positions, block after block
//
// A term's postings are in blocks of blockSize documents. A block holds, for each
// document in order, a uvarint: the difference from the document before (the block
// before's last, or -1 for the first block) shifted left by 3, its low 3 bits the
// fields' code. A code below the number of fields is the one field that holds the term,
// once: most postings, whose entry is then a byte when the documents are close. The code
// equal to the number of fields (an index of fewer than 7) is one field that holds it
// more than once: a uvarint follows, (count − 2) × fields + the field. Code 7 is followed
// by a byte with a bit set for each field that holds the term, and for each such field
// the term's count there (uvarint). Its positions hold, for each document and each field
// with the term, the count's positions in the field, each a uvarint difference from the
// one before (the first from 0).
const (
	secIDs = iota
	secTimes
	secNorms
	secKeys
	secDicts
	secNames
	secTerms
	secPool
	secPostings
	secPositions
	sections
)

var magic = [8]byte{'a', 'g', 'm', 'e', 'm', 'f', 't', '1'}

// formatVersion is this layout's version, in the footer. 2: the fields' code in the
// document's difference (a posting of 3 bytes or more became 1 or 2); 3: a code for one
// field that holds the term more than once (3 bytes or more became 2); 4: no block
// index for a term of one block; 5: ids less the least of them, in 4 bytes where they fit;
// 6: names.
const formatVersion = 6

// idsLayout is how the ids section holds ids: the least of them (0 for none), which
// it gives each less, and the width of each: 4 bytes where every one fits, else 8.
func idsLayout(ids []int64) (base int64, width int) {
	if len(ids) > 0 {
		base = slices.Min(ids)
	}
	for _, id := range ids {
		if uint64(id-base) > math.MaxUint32 {
			return base, 8
		}
	}
	return base, 4
}

// appendIDs appends ids as idsLayout lays them out.
func appendIDs(b []byte, ids []int64) []byte {
	base, width := idsLayout(ids)
	b = binary.LittleEndian.AppendUint64(b, uint64(base))
	for _, id := range ids {
		if width == 4 {
			b = binary.LittleEndian.AppendUint32(b, uint32(id-base))
		} else {
			b = binary.LittleEndian.AppendUint64(b, uint64(id-base))
		}
	}
	return b
}

// idColumn is n ids as appendIDs laid them out, read.
type idColumn struct {
	ids   []byte // after the least id
	base  int64
	width uint64
}

// readIDs reads n ids from b, which must hold them and nothing more.
func readIDs(b []byte, n uint64) (c idColumn, ok bool) {
	if len(b) < 8 {
		return c, false
	}
	c.base, c.width, c.ids = int64(binary.LittleEndian.Uint64(b)), 4, b[8:]
	if n > 0 && uint64(len(c.ids)) == n*8 {
		c.width = 8
	}
	return c, uint64(len(c.ids)) == n*c.width
}

// at is the n-th id.
func (c idColumn) at(n uint64) int64 {
	if c.width == 4 {
		return c.base + int64(binary.LittleEndian.Uint32(c.ids[n*4:]))
	}
	return c.base + int64(binary.LittleEndian.Uint64(c.ids[n*8:]))
}

// blockSize is how many documents a block of postings holds.
const blockSize = 128

// MaxFields bounds the fields of an index: a byte says which hold a term, and a code
// of 3 bits names one of them or none.
const MaxFields = 7

// manyFields is the fields' code of a posting whose fields and counts follow it.
const manyFields = 7

// termRecord is a term's entry in the terms section.
type termRecord struct {
	pool      uint32 // where the term is in the pool
	df        uint32 // documents that hold it
	postings  uint64 // where its block index (or its one block) starts in the postings section
	positions uint64 // where its positions start in the positions section
}

const termRecordSize = 24

func (r termRecord) append(b []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, r.pool)
	b = binary.LittleEndian.AppendUint32(b, r.df)
	b = binary.LittleEndian.AppendUint64(b, r.postings)
	return binary.LittleEndian.AppendUint64(b, r.positions)
}

func readTermRecord(b []byte) termRecord {
	return termRecord{binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:]),
		binary.LittleEndian.Uint64(b[8:]), binary.LittleEndian.Uint64(b[16:])}
}

// blockEntry is a block's entry in its term's block index: its last document, where its
// postings and positions end (from the start of the term's blocks, and of its
// positions), and for each field the most times a document of the block holds the term
// and the shortest length (as a norm byte): what bounds its best score.
type blockEntry struct {
	last, end, posEnd uint32
	maxTF, minNorm    [MaxFields]uint8
}

// fieldBytesMax is each field's byte at its most: a block's shortest norm before its
// first document, and the counts that bound a one-block term's score by nothing.
var fieldBytesMax = [MaxFields]uint8{255, 255, 255, 255, 255, 255, 255}

func blockEntrySize(fields int) int { return 12 + 2*fields }

func (e *blockEntry) append(b []byte, fields int) []byte {
	b = binary.LittleEndian.AppendUint32(b, e.last)
	b = binary.LittleEndian.AppendUint32(b, e.end)
	b = binary.LittleEndian.AppendUint32(b, e.posEnd)
	b = append(b, e.maxTF[:fields]...)
	return append(b, e.minNorm[:fields]...)
}

func readBlockEntry(b []byte, fields int, e *blockEntry) {
	e.last = binary.LittleEndian.Uint32(b)
	e.end = binary.LittleEndian.Uint32(b[4:])
	e.posEnd = binary.LittleEndian.Uint32(b[8:])
	copy(e.maxTF[:fields], b[12:12+fields])
	copy(e.minNorm[:fields], b[12+fields:12+2*fields])
}

// footer is what a segment file ends with.
type footer struct {
	fields, keys, docs, terms uint32
	off, len                  [sections]uint64
	totals                    []uint64 // each field's terms, over every document
	widths                    []uint8  // each key's code width
}

func (f *footer) size() int { return 8 + 5*4 + sections*16 + int(f.fields)*8 + int(f.keys) + 4 + 4 }

func (f *footer) append(b []byte) []byte {
	start := len(b)
	b = append(b, magic[:]...)
	for _, v := range []uint32{formatVersion, f.fields, f.keys, f.docs, f.terms} {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	for i := range sections {
		b = binary.LittleEndian.AppendUint64(b, f.off[i])
		b = binary.LittleEndian.AppendUint64(b, f.len[i])
	}
	for _, t := range f.totals {
		b = binary.LittleEndian.AppendUint64(b, t)
	}
	b = append(b, f.widths...)
	b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b[start:]))
	return binary.LittleEndian.AppendUint32(b, uint32(len(b)-start+4))
}

// ErrDamaged is a segment file that does not read as one: cut short, overwritten, or
// not a segment.
var ErrDamaged = errors.New("search index segment is damaged")

// readFooter reads the footer of a segment file's bytes, and checks that its sections
// lie where the file has room for them, in order.
func readFooter(data []byte) (*footer, error) {
	if len(data) < 8+4 {
		return nil, ErrDamaged
	}
	n := int(binary.LittleEndian.Uint32(data[len(data)-4:]))
	if n < 8+5*4+sections*16+8 || n > len(data)-8 {
		return nil, ErrDamaged
	}
	b := data[len(data)-n:]
	if [8]byte(b[:8]) != magic || [8]byte(data[:8]) != magic {
		return nil, ErrDamaged
	}
	body := b[:n-8]
	if crc32.ChecksumIEEE(body) != binary.LittleEndian.Uint32(b[n-8:]) {
		return nil, ErrDamaged
	}
	u32 := func(i int) uint32 { return binary.LittleEndian.Uint32(body[8+4*i:]) }
	if u32(0) != formatVersion {
		return nil, ErrDamaged
	}
	f := &footer{fields: u32(1), keys: u32(2), docs: u32(3), terms: u32(4)}
	if f.fields == 0 || f.fields > MaxFields || f.keys > 64 || f.size() != n {
		return nil, ErrDamaged
	}
	at := 8 + 5*4
	next := uint64(8) // sections start after the magic, in order
	for i := range sections {
		f.off[i] = binary.LittleEndian.Uint64(body[at:])
		f.len[i] = binary.LittleEndian.Uint64(body[at+8:])
		at += 16
		if f.off[i] < next || f.len[i] > uint64(len(data)) || f.off[i]+f.len[i] > uint64(len(data)-n) {
			return nil, ErrDamaged
		}
		next = f.off[i] + f.len[i]
	}
	for range f.fields {
		f.totals = append(f.totals, binary.LittleEndian.Uint64(body[at:]))
		at += 8
	}
	f.widths = append(f.widths, body[at:at+int(f.keys)]...)
	for _, w := range f.widths {
		if w != 1 && w != 2 && w != 4 {
			return nil, ErrDamaged
		}
	}
	return f, nil
}

// normByte quantizes a field's length in terms to a byte: exact below 16, then four
// significant bits, as Lucene keeps its norms. byteNorm is the length a byte stands for.
func normByte(n uint32) uint8 {
	if n < 16 {
		return uint8(n)
	}
	shift := bits.Len32(n) - 4 // n >> shift is 8..15
	v := 16 + (shift-1)*8 + int(n>>shift) - 8
	return uint8(min(v, math.MaxUint8))
}

func byteNorm(b uint8) float64 {
	if b < 16 {
		return float64(b)
	}
	shift := int(b-16)/8 + 1
	mant := int(b-16)%8 + 8
	return float64(mant<<shift) + float64(int(1)<<shift)/2 // the middle of what it stands for
}
