package journal

import (
	"bytes"
	"encoding/json"
	"errors"
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
		return nil, errors.New("empty entry")
	}
	switch stored[0] {
	case '{':
		return stored, nil
	case tagObservation, tagEvent:
		raw, err := s2.Decode(nil, stored[1:])
		if err != nil {
			return nil, fmt.Errorf("decompress entry: %w", err)
		}
		return raw, nil
	}
	return nil, fmt.Errorf("entry of unknown kind %#x", stored[0])
}

// decodeEntry reads a stored entry.
func decodeEntry(stored []byte) (memory.Entry, error) {
	var e memory.Entry
	raw, err := entryJSON(stored)
	if err != nil {
		return e, err
	}
	return e, json.Unmarshal(raw, &e)
}

// observationPrefix starts every observation stored as plain JSON: memory.Entry encodes
// the one kind it holds as its only member.
var observationPrefix = []byte(`{"observation":`)

// holdsObservation tells an observation from an event by the stored bytes' first ones.
func holdsObservation(stored []byte) bool {
	return len(stored) > 0 && stored[0] == tagObservation || bytes.HasPrefix(stored, observationPrefix)
}
