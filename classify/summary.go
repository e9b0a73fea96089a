package classify

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode"

	"github.com/agmem/agmem/internal/jsonscan"
	"github.com/agmem/agmem/redact"
)

// summaryKeys are the argument keys a summary shows, in this order: the Python agmem's
// path, file, url, query and command, plus file_path and pattern, which Claude Code's
// Read, Edit, Grep and Glob use.
var summaryKeys = [...]string{"path", "file", "file_path", "url", "query", "pattern", "command"}

const (
	maxValueRunes   = 100
	maxSummaryRunes = 200
)

// Summarize is the Python agmem's summary: the tool name followed by key=value for the
// argument keys path, file, file_path, url, query, pattern and command (in that order, when
// present), each value cut to 100 runes (less a redaction's mark the cut would split in
// two, which the Python agmem kept), the whole cut to 200 runes. String values appear
// as they are, other values as compact JSON. When args is not a JSON object the summary is
// the tool name alone. Control characters become spaces, so a summary is always one line.
func Summarize(toolName string, args json.RawMessage) string {
	parts := []string{toolName}
	var values [len(summaryKeys)][]byte
	if summaryValues(args, &values) {
		for i, k := range summaryKeys {
			if v := values[i]; v != nil {
				parts = append(parts, k+"="+cut(valueText(v), maxValueRunes))
			}
		}
	}
	return OneLine(strings.Join(parts, " "))
}

// summaryValues reads the last value of each of summaryKeys in args, and says whether
// args is a JSON object: what json.Unmarshal into a map of raw values gives, read in one
// pass rather than through encoding/json's reflection, which cost every hook's process
// 26 µs to set up, and record --jsonl a map for every line.
func summaryValues(args []byte, values *[len(summaryKeys)][]byte) bool {
	return jsonscan.Members(args, func(r *jsonscan.Scanner, name string) bool {
		v, err := r.Skip(1)
		if i := slices.Index(summaryKeys[:], name); i >= 0 {
			values[i] = v
		}
		return err == nil
	})
}

// OneLine makes a summary given in input as safe as one Summarize makes: one line of at
// most 200 runes, trimmed.
func OneLine(s string) string {
	return strings.TrimSpace(cut(strings.Map(oneLine, s), maxSummaryRunes))
}

func valueText(v []byte) string {
	v = bytes.TrimSpace(v)
	if len(v) > 0 && v[0] == '"' {
		r := jsonscan.New(v)
		if s, err := r.Unquote(); err == nil && r.End() {
			return s
		}
	}
	var compact bytes.Buffer
	if json.Compact(&compact, v) == nil {
		return compact.String()
	}
	return string(v)
}

// oneLine turns anything that could break a line (or a YAML scalar) into a space.
func oneLine(r rune) rune {
	if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
		return ' '
	}
	return r
}

// cut is s to n runes, less a redaction's mark it would cut in two. It runs on every
// record: a long command is cut where its n-th rune ends, not copied into runes first.
func cut(s string, n int) string {
	for i := range s {
		if n == 0 {
			return redact.Uncut(s[:i])
		}
		n--
	}
	return s
}
