package journal

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/klauspost/compress/s2"

	"github.com/agmem/agmem/memory"
)

// An entry is stored as a tag byte naming its kind, then its JSON as an S2 block: the
// text tool calls carry (source files, command output, JSON) compresses to about two
// thirds, in microseconds, with no tables to build on record's path. Entries written
// by schema 1, and the stubs of forgotten calls, are plain JSON and start with '{'.
const (
	tagObservation byte = 1
	tagEvent       byte = 2
)

// encodeEntry is e as the entries bucket stores it.
func encodeEntry(e memory.Entry) ([]byte, error) {
	raw, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	tag := tagEvent
	if e.Observation != nil {
		tag = tagObservation
	}
	// Copied to its size: bbolt holds every value a transaction puts until it commits.
	return append([]byte{tag}, s2.Encode(nil, raw)...), nil
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
		raw, err := s2.Decode(nil, stored[1:])
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
		return e, err
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
