package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agmem/agmem/memory"
)

// SessionRecord encodes entries one JSON object per line: the JSON encoding of
// memory.Entry, then '\n'. It is the machine-readable record that replay reads back from
// git, so it keeps everything the journal held.
//
// HTML characters in the strings it writes are not escaped, so that the record reads
// well in a diff; arguments and results are kept as the journal holds them, which
// escapes them as json.Marshal does (FORMAT.md §Records). An argument
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
	err := EachRecordEntry(data, func(e memory.Entry, _ []byte) error {
		entries = append(entries, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return entries, nil
}

// EachRecordEntry calls fn with each entry of what SessionRecord wrote, and the line
// that holds it (a part of data, without its line ending), in order, as
// ParseSessionRecord reads them, so that a caller can use the first entries of a large
// record while the rest is read. It stops at the first line that is not a valid entry,
// or at fn's first error, and returns it.
func EachRecordEntry(data []byte, fn func(e memory.Entry, line []byte) error) error {
	for n := 1; len(data) > 0; n++ {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte("\n"))
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		e, err := memory.DecodeEntry(line)
		if err != nil {
			return fmt.Errorf("session record line %d: %w", n, err)
		}
		// The record may come from a clone anyone could have written to: check what
		// every later step relies on.
		if err := e.Validate(); err != nil {
			return fmt.Errorf("session record line %d: %w", n, err)
		}
		if err := fn(e, line); err != nil {
			return err
		}
	}
	return nil
}

// MaxRecordPart bounds one file of a session record. Git hosts refuse large files (and
// a peer tool's 111 MB record was refused), while a busy session's record has no bound.
const MaxRecordPart = 10 << 20

// RecordPart is one file of a batch's session record.
type RecordPart struct {
	Path string
	Data []byte
}

// SessionRecordParts is the session record of one flush batch as the files a commit
// holds, none over MaxRecordPart: first (a Layout's SessionRecordPath), then
// <batch>-2.jsonl, <batch>-3.jsonl, … The parts joined in order are
// SessionRecord(entries). A part ends where a line ends, unless one line alone is longer
// than a part; then that line goes on in the next part.
func SessionRecordParts(first string, entries []memory.Entry) []RecordPart {
	var parts []RecordPart
	for i, data := range splitRecord(SessionRecord(entries), MaxRecordPart) {
		path := first
		if i > 0 {
			path = strings.TrimSuffix(first, recordExt) + "-" + strconv.Itoa(i+1) + recordExt
		}
		parts = append(parts, RecordPart{Path: path, Data: data})
	}
	return parts
}

const recordExt = ".jsonl"

// splitRecord cuts data into pieces of at most limit bytes, each ending with a line
// when a line ends within it. Empty data is one empty piece: a batch always has a file.
func splitRecord(data []byte, limit int) [][]byte {
	pieces := [][]byte{}
	for len(data) > limit {
		cut := bytes.LastIndexByte(data[:limit], '\n') + 1
		if cut == 0 {
			cut = limit
		}
		pieces = append(pieces, data[:cut])
		data = data[cut:]
	}
	return append(pieces, data)
}

// RecordFiles groups the names of the files in a session directory into records, each
// the names of its parts in order: "B.jsonl", "B-2.jsonl", "B-3.jsonl", … A name that
// is no part of another record (every name without its first part) is a record alone.
func RecordFiles(names []string) [][]string {
	firsts := map[string]bool{}
	for _, name := range names {
		firsts[name] = true
	}
	type part struct {
		name string
		n    int
	}
	byFirst := map[string][]part{}
	var order []string
	for _, name := range names {
		first, n := name, 1
		if base, num, ok := cutPartNumber(name); ok && firsts[base+recordExt] {
			first, n = base+recordExt, num
		}
		if byFirst[first] == nil {
			order = append(order, first)
		}
		byFirst[first] = append(byFirst[first], part{name, n})
	}
	slices.Sort(order)
	records := make([][]string, 0, len(order))
	for _, first := range order {
		parts := byFirst[first]
		slices.SortFunc(parts, func(a, b part) int { return a.n - b.n })
		var record []string
		for _, p := range parts {
			record = append(record, p.name)
		}
		records = append(records, record)
	}
	return records
}

// cutPartNumber reads "<base>-<n>.jsonl", n 2 or more, as base and n.
func cutPartNumber(name string) (base string, n int, ok bool) {
	stem, found := strings.CutSuffix(name, recordExt)
	if !found {
		return "", 0, false
	}
	i := strings.LastIndexByte(stem, '-')
	if i < 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(stem[i+1:])
	if err != nil || n < 2 || strconv.Itoa(n) != stem[i+1:] {
		return "", 0, false
	}
	return stem[:i], n, true
}
