package classify

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"
)

// summaryKeys are the argument keys a summary shows, in this order: the Python agmem's
// path, file, url, query and command, plus file_path and pattern, which Claude Code's
// Read, Edit, Grep and Glob use.
var summaryKeys = []string{"path", "file", "file_path", "url", "query", "pattern", "command"}

const (
	maxValueRunes   = 100
	maxSummaryRunes = 200
)

// Summarize is the Python agmem's summary: the tool name followed by key=value for the
// argument keys path, file, file_path, url, query, pattern and command (in that order, when
// present), each value cut to 100 runes, the whole cut to 200 runes. String values appear
// as they are, other values as compact JSON. When args is not a JSON object the summary is
// the tool name alone. Control characters become spaces, so a summary is always one line.
func Summarize(toolName string, args json.RawMessage) string {
	parts := []string{toolName}
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) == nil {
		for _, k := range summaryKeys {
			if v, ok := obj[k]; ok {
				parts = append(parts, k+"="+cut(valueText(v), maxValueRunes))
			}
		}
	}
	return OneLine(strings.Join(parts, " "))
}

// OneLine makes a summary given in input as safe as one Summarize makes: one line of at
// most 200 runes, trimmed.
func OneLine(s string) string {
	return strings.TrimSpace(cut(strings.Map(oneLine, s), maxSummaryRunes))
}

func valueText(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	var s string
	if len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil {
		return s
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

func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}
