package journal

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/pierrec/lz4/v4"

	"github.com/agmem/agmem/internal/jsonscan"
	"github.com/agmem/agmem/memory"
)

// An entry is stored as a tag byte naming its kind, its JSON's length as a uvarint, then
// its JSON as an LZ4 block: the text tool calls carry (source files, command output,
// JSON) compresses to about two thirds, in microseconds. LZ4 rather than S2, which
// compresses as well: S2's package builds CRC tables when any process that links it
// starts, a quarter of a millisecond on every hook (BENCHMARKS.md). Entries written by
// schema 1, entries that do not compress, and the stubs of forgotten calls, are plain
// JSON and start with '{'.
const (
	tagObservation byte = 1
	tagEvent       byte = 2
)

// maxEntryJSON bounds the length a stored entry claims, so that a damaged one cannot
// ask for all the memory there is.
const maxEntryJSON = 1 << 30

// compressors are LZ4's (each 128 KiB of tables): entries are encoded on every core.
var compressors = sync.Pool{New: func() any { return new(lz4.Compressor) }}

// encodeEntry is e as the entries bucket stores it.
func encodeEntry(e memory.Entry) ([]byte, error) {
	raw, err := marshalEntry(e)
	if err != nil {
		return nil, err
	}
	tag := tagEvent
	if e.Observation != nil {
		tag = tagObservation
	}
	buf := make([]byte, 1+binary.MaxVarintLen64+lz4.CompressBlockBound(len(raw)))
	buf[0] = tag
	head := 1 + binary.PutUvarint(buf[1:], uint64(len(raw)))
	c := compressors.Get().(*lz4.Compressor)
	n, err := c.CompressBlock(raw, buf[head:])
	compressors.Put(c)
	if err != nil || n == 0 || head+n >= len(raw) {
		return raw, nil // it does not compress: kept as it is
	}
	// Copied to its size: bbolt holds every value a transaction puts until it commits.
	return append([]byte(nil), buf[:head+n]...), nil
}

// marshalEntry is json.Marshal(e), byte for byte. encoding/json compacts a
// json.RawMessage again, a byte at a time, though capture writes an observation's
// arguments and result compact: a tenth of record --jsonl's CPU. Those two are checked
// instead (jsonscan.Compact), and spliced in with the HTML escaping json.Marshal
// applies, into the rest, which encoding/json writes as ever, each member of the
// structs included.
func marshalEntry(e memory.Entry) ([]byte, error) {
	o := e.Observation
	if o == nil || !jsonscan.Compact(o.Arguments) || len(o.Result) > 0 && !jsonscan.Compact(o.Result) {
		return json.Marshal(e)
	}
	// A number encoding/json writes for no Go value: only a RawMessage can hold it.
	placeholder := json.RawMessage("-0e-0")
	shadow := *o
	shadow.Arguments = placeholder
	spliced := [][]byte{o.Arguments}
	members := []string{`"arguments":-0e-0`}
	if len(o.Result) > 0 {
		shadow.Result = placeholder
		spliced, members = append(spliced, o.Result), append(members, `"result":-0e-0`)
	}
	rest, err := json.Marshal(memory.Entry{Observation: &shadow})
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	out.Grow(len(rest) + len(o.Arguments) + len(o.Result))
	for i, member := range members {
		// Found in order, each once: no string encoding/json writes holds an unescaped
		// quote, and no number it writes is the placeholder.
		at := bytes.Index(rest, []byte(member))
		if at < 0 {
			return json.Marshal(e) // members in another order: not expected, still right
		}
		out.Write(rest[:at+len(member)-len(placeholder)])
		json.HTMLEscape(&out, spliced[i])
		rest = rest[at+len(member):]
	}
	out.Write(rest)
	return out.Bytes(), nil
}

// entryJSON is the JSON of a stored entry, a memory.Entry's. It may share stored's
// bytes.
func entryJSON(stored []byte) ([]byte, error) {
	if len(stored) == 0 {
		return nil, damage("an entry is empty")
	}
	switch stored[0] {
	case '{':
		return stored, nil
	case tagObservation, tagEvent:
		size, n := binary.Uvarint(stored[1:])
		// An LZ4 block expands at most 255 times: a larger length is a lie, not to be
		// allocated.
		if n <= 0 || size > maxEntryJSON || size > 255*uint64(len(stored)-1-n)+16 {
			return nil, damage("an entry's length is unreadable")
		}
		raw := make([]byte, size)
		got, err := lz4.UncompressBlock(stored[1+n:], raw)
		if err == nil && uint64(got) != size {
			err = fmt.Errorf("%d bytes, not %d", got, size)
		}
		if err != nil {
			return nil, damage("an entry does not decompress: " + err.Error())
		}
		return raw, nil
	}
	return nil, damage(fmt.Sprintf("an entry is of no known kind (%#x)", stored[0]))
}

// decodeEntry reads a stored entry, which holds one kind: an observation or an event.
func decodeEntry(stored []byte) (memory.Entry, error) {
	raw, err := entryJSON(stored)
	if err != nil {
		return memory.Entry{}, err
	}
	return entryFrom(raw)
}

// entryFrom reads an entry's JSON.
func entryFrom(raw []byte) (memory.Entry, error) {
	var e memory.Entry
	if err := json.Unmarshal(raw, &e); err != nil {
		return e, damage("an entry does not decode: " + err.Error()) // agmem wrote it valid
	}
	if (e.Observation == nil) == (e.Event == nil) {
		return e, damage("an entry holds no observation or event, or both")
	}
	return e, nil
}

// observationPrefix starts every observation stored as plain JSON: memory.Entry encodes
// the one kind it holds as its only member.
var observationPrefix = []byte(`{"observation":`)

// holdsObservation tells an observation from an event by the stored bytes' first ones.
func holdsObservation(stored []byte) bool {
	return len(stored) > 0 && stored[0] == tagObservation || bytes.HasPrefix(stored, observationPrefix)
}
