package journal

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
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

// Pending values (pendingValue) start with tagObservation or tagEvent, or with these.
const (
	// tagNoResult: a call reported before its result (memory.Observation.NoResult), then
	// the time it was recorded (8 bytes, big-endian Unix nanoseconds), then its memory type.
	tagNoResult byte = 3
	// tagEnding: an event after which an agent reports no more results of the calls
	// before it (Stop, SessionEnd).
	tagEnding byte = 4
)

// maxEntryJSON bounds the length a stored entry claims, so that a damaged one cannot
// ask for all the memory there is.
const maxEntryJSON = 1 << 30

// encoders are what encodeEntry works in, for entries encoded on every core: LZ4's
// compressor (128 KiB of tables), and room for an entry's JSON and its compressed
// block, which only the stored value outlives. Allocated afresh for each entry, the two
// were a seventh of what a record --jsonl of 100,000 allocated (1.96 GB).
var encoders = sync.Pool{New: func() any { return new(encoder) }}

type encoder struct {
	lz4         lz4.Compressor
	json, block []byte
}

// encodeEntry is e as the entries bucket stores it.
func encodeEntry(e memory.Entry) ([]byte, error) {
	enc := encoders.Get().(*encoder)
	defer encoders.Put(enc)
	raw, err := marshalEntry(enc.json[:0], e)
	if err != nil {
		return nil, err
	}
	enc.json = raw
	tag := tagEvent
	if e.Observation != nil {
		tag = tagObservation
	}
	if need := 1 + binary.MaxVarintLen64 + lz4.CompressBlockBound(len(raw)); cap(enc.block) < need {
		enc.block = make([]byte, need)
	}
	buf := enc.block[:cap(enc.block)]
	buf[0] = tag
	head := 1 + binary.PutUvarint(buf[1:], uint64(len(raw)))
	n, err := enc.lz4.CompressBlock(raw, buf[head:])
	// Copied to its size: bbolt holds every value a transaction puts until it commits.
	if err != nil || n == 0 || head+n >= len(raw) {
		return bytes.Clone(raw), nil // it does not compress: kept as it is
	}
	return bytes.Clone(buf[:head+n]), nil
}

// marshalEntry appends json.Marshal(e) to b, byte for byte. An observation, what nearly
// every entry is, is written here rather than by encoding/json: its reflection over the
// struct costs a hook's process a tenth of a millisecond to set up, and compacting a
// json.RawMessage again, a byte at a time, though capture wrote it compact, was a tenth
// of record --jsonl's CPU. The arguments and result are checked instead
// (jsonscan.Compact) and copied with the HTML escaping json.Marshal applies. Anything
// else, and any value encoding/json would refuse, goes to encoding/json.
func marshalEntry(b []byte, e memory.Entry) ([]byte, error) {
	o := e.Observation
	if o == nil || e.Event != nil || !jsonscan.Compact(o.Arguments) || len(o.Result) > 0 && !jsonscan.Compact(o.Result) {
		return appendMarshal(b, e)
	}
	stamp, err := o.Timestamp.MarshalJSON()
	if err != nil {
		return appendMarshal(b, e) // the error as encoding/json words it
	}
	out := bytes.NewBuffer(b)
	out.Grow(320 + len(o.Arguments) + len(o.Result) + len(o.Summary) + len(o.Error))
	str := func(name, value string) {
		out.WriteString(name)
		out.Write(jsonscan.AppendString(out.AvailableBuffer(), value, true))
	}
	optional := func(name, value string) {
		if value != "" {
			str(name, value)
		}
	}
	integer := func(name string, n int64) {
		out.WriteString(name)
		out.Write(strconv.AppendInt(out.AvailableBuffer(), n, 10))
	}
	str(`{"observation":{"id":`, o.ID)
	str(`,"session_id":`, o.SessionID)
	out.WriteString(`,"timestamp":`)
	out.Write(stamp)
	str(`,"tool_name":`, o.ToolName)
	out.WriteString(`,"arguments":`)
	out.Write(jsonscan.AppendHTMLEscape(out.AvailableBuffer(), o.Arguments))
	if len(o.Result) > 0 {
		out.WriteString(`,"result":`)
		out.Write(jsonscan.AppendHTMLEscape(out.AvailableBuffer(), o.Result))
	}
	str(`,"memory_type":`, string(o.MemoryType))
	str(`,"summary":`, o.Summary)
	optional(`,"source":`, o.Source)
	optional(`,"tool_use_id":`, o.ToolUseID)
	optional(`,"cwd":`, o.Cwd)
	optional(`,"agent_id":`, o.AgentID)
	optional(`,"prompt_id":`, o.PromptID)
	if o.DurationMS != nil {
		integer(`,"duration_ms":`, *o.DurationMS)
	}
	optional(`,"error":`, o.Error)
	if o.Interrupted {
		out.WriteString(`,"interrupted":true`)
	}
	if o.NoResult {
		out.WriteString(`,"no_result":true`)
	}
	if o.Redactions != 0 {
		integer(`,"redactions":`, int64(o.Redactions))
	}
	if len(o.Truncated) > 0 {
		sep := `,"truncated":{`
		for _, k := range slices.Sorted(maps.Keys(o.Truncated)) {
			str(sep, k)
			integer(":", int64(o.Truncated[k]))
			sep = ","
		}
		out.WriteByte('}')
	}
	optional(`,"withheld":`, o.Withheld)
	out.WriteString("}}")
	return out.Bytes(), nil
}

// appendMarshal appends json.Marshal(v) to b.
func appendMarshal(b []byte, v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	return append(b, raw...), err
}

// entryJSON is the JSON of a stored entry, a memory.Entry's. It may share stored's
// bytes.
func entryJSON(stored []byte) ([]byte, error) { return entryJSONIn(nil, stored) }

// entryJSONIn is entryJSON, decompressed into buf where it has room: a reader that
// passes over most entries it reads reuses one buffer for them.
func entryJSONIn(buf, stored []byte) ([]byte, error) {
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
		var raw []byte
		if uint64(cap(buf)) >= size {
			raw = buf[:size]
		} else {
			raw = make([]byte, size)
		}
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
	e, err := memory.DecodeEntry(raw)
	if err != nil {
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
