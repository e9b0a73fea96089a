package render

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/agmem/agmem/memory"
)

// SessionRecord encodes entries one JSON object per line: the JSON encoding of
// memory.Entry, then '\n'. It is the machine-readable record that replay reads back from
// git, so it keeps everything the journal held.
//
// HTML characters are not escaped, so that the record reads well in a diff. An argument
// or result that is not valid JSON (the journal admits none) is kept as a JSON string of
// its text rather than lost. An entry whose timestamp JSON cannot encode (a year outside
// 0–9999, which no decoded input can hold) is a caller's bug and panics.
func SessionRecord(entries []memory.Entry) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, e := range entries {
		if err := enc.Encode(e); err == nil {
			continue
		}
		if err := enc.Encode(withValidJSON(e)); err != nil {
			panic(fmt.Sprintf("render: session record: entry %s: %v", e.ID(), err))
		}
	}
	return b.Bytes()
}

func withValidJSON(e memory.Entry) memory.Entry {
	if e.Observation == nil {
		return e
	}
	o := *e.Observation
	o.Arguments, o.Result = validJSON(o.Arguments), validJSON(o.Result)
	e.Observation = &o
	return e
}

func validJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || json.Valid(raw) {
		return raw
	}
	s, _ := json.Marshal(string(raw))
	return s
}

// ParseSessionRecord reads what SessionRecord wrote. Blank lines (and '\r' line endings)
// are allowed; a line that is not a valid entry is reported with its line number.
func ParseSessionRecord(data []byte) ([]memory.Entry, error) {
	var entries []memory.Entry
	for i, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var e memory.Entry
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("session record line %d: %w", i+1, err)
		}
		// The record may come from a clone anyone could have written to: check what
		// every later step relies on.
		if err := e.Validate(); err != nil {
			return nil, fmt.Errorf("session record line %d: %w", i+1, err)
		}
		entries = append(entries, e)
	}
	return entries, nil
}
