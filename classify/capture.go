package classify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
)

// Rules are the capture rules; Default() gives the Python agmem's.
type Rules struct {
	IgnoreTools    []string // tool names or globs ("mcp__slack__*") never captured, ignoring case
	MinResultChars int      // a non-empty result shorter than this (in characters/runes) is not captured
}

// Default returns the Python agmem's capture rules: trivial tools are ignored and a
// result under 50 characters is not worth keeping.
func Default() Rules {
	return Rules{
		IgnoreTools:    []string{"echo", "pwd", "whoami", "date", "clear", "history", "noop", "ping"},
		MinResultChars: 50,
	}
}

// Capture says whether a call is kept, and if not, why (a short reason for --verbose).
//
// result is the raw JSON result; nil, empty, null and "" all mean no result, and a call
// without a result is kept. A JSON string is measured by its runes once unquoted, any other
// JSON value by the runes of its compact encoding. A failed call (result holds the error)
// is kept however short its error, unless its tool is ignored.
func (r Rules) Capture(toolName string, result json.RawMessage, failed bool) (bool, string) {
	for _, t := range r.IgnoreTools {
		if ok, _ := path.Match(strings.ToLower(t), strings.ToLower(toolName)); ok || strings.EqualFold(t, toolName) {
			return false, fmt.Sprintf("tool %q is ignored", toolName)
		}
	}
	if failed {
		return true, ""
	}
	// A result of 6 bytes a character or more is long enough whatever it holds
	// (\uXXXX is the longest a character gets): no need to count.
	if len(result) >= 6*r.MinResultChars+2 {
		return true, ""
	}
	if n := resultChars(result); n > 0 && n < r.MinResultChars {
		return false, fmt.Sprintf("result is %d characters, under %d", n, r.MinResultChars)
	}
	return true, ""
}

// resultChars is the length of a result as the Python agmem measured its string: 0 when
// there is none.
func resultChars(raw json.RawMessage) int {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return 0
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return utf8.RuneCountInString(s)
		}
	}
	var compact bytes.Buffer
	if json.Compact(&compact, raw) == nil {
		return utf8.RuneCount(compact.Bytes())
	}
	// Not JSON after all: measure it as the text it is rather than refuse it here.
	return utf8.RuneCount(raw)
}
