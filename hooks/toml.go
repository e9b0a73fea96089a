package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
)

// readTOML reads the switch in a TOML file; a setting of it that is not true or false
// is an error.
func (w Switch) readTOML(src []byte) (state, setting string, err error) {
	var doc map[string]any
	if err := toml.Unmarshal(src, &doc); err != nil {
		return "", "", fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	state, setting = SwitchUnset, w.String()
	for _, n := range w.names() {
		table, _ := doc[n[0]].(map[string]any)
		switch v, set := table[n[1]]; {
		case !set:
		case v == false:
			return SwitchOff, w.name(n[0], n[1]), nil
		case v == true:
			state = SwitchOn
		default:
			return "", "", fmt.Errorf("%w: %s is %v, not true or false", ErrUnreadable, w.name(n[0], n[1]), v)
		}
	}
	return state, setting, nil
}

// enableTOML returns src with the switch set true: a line under the table's header, or
// the table added at the end. Every other line stays as it was; if the result would read
// differently in any other way (a header inside a multi-line string, a table written
// inline), it refuses rather than guess.
func (w Switch) enableTOML(src []byte) ([]byte, error) {
	var before map[string]any
	if err := toml.Unmarshal(src, &before); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	newline := lineEnding(src)
	line := w.Key + " = true" + newline
	header := regexp.MustCompile(`(?m)^[ \t]*\[[ \t]*` + regexp.QuoteMeta(w.Table) + `[ \t]*\][ \t]*(#.*)?(\r?\n|\z)`)
	var out []byte
	if loc := header.FindIndex(src); loc != nil {
		out = append([]byte{}, src[:loc[1]]...)
		if !bytes.HasSuffix(out, []byte("\n")) {
			out = append(out, newline...)
		}
		out = append(append(out, line...), src[loc[1]:]...)
	} else {
		out = appendTable(src, "["+w.Table+"]"+newline+line, newline)
	}
	var after map[string]any
	if err := toml.Unmarshal(out, &after); err == nil {
		if table, ok := after[w.Table].(map[string]any); ok && table[w.Key] == true {
			delete(table, w.Key)
			if _, had := before[w.Table]; !had && len(table) == 0 {
				delete(after, w.Table)
			}
			if reflect.DeepEqual(before, after) {
				return out, nil
			}
		}
	}
	return nil, fmt.Errorf("%w: agmem cannot add %s = true to it without changing how the rest reads", ErrUnreadable, w)
}

// renameDeprecated returns src with the switch's deprecated setting renamed to the one
// agmem writes, its value and the rest of its line kept, or src as it is when there is
// none or the current name is set too. Like enableTOML, it refuses an edit that would
// change how anything else reads.
func (w Switch) renameDeprecated(src []byte) ([]byte, bool, error) {
	table, key, _ := strings.Cut(w.Deprecated, ".")
	if key == "" || table != w.Table {
		return src, false, nil
	}
	var before map[string]any
	if err := toml.Unmarshal(src, &before); err != nil {
		return nil, false, fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	t, _ := before[table].(map[string]any)
	if _, set := t[key]; !set {
		return src, false, nil
	}
	if _, set := t[w.Key]; set {
		return src, false, nil
	}
	line := regexp.MustCompile(`(?m)^([ \t]*)` + regexp.QuoteMeta(key) + `([ \t]*=)`)
	header := regexp.MustCompile(`(?m)^[ \t]*\[[ \t]*` + regexp.QuoteMeta(table) + `[ \t]*\]`)
	if h := header.FindIndex(src); h != nil {
		if loc := line.FindSubmatchIndex(src[h[1]:]); loc != nil {
			at := h[1] + loc[3] // after the indentation
			out := append(append(append([]byte{}, src[:at]...), w.Key...), src[at+len(key):]...)
			var after map[string]any
			if err := toml.Unmarshal(out, &after); err == nil {
				t[w.Key] = t[key]
				delete(t, key)
				if reflect.DeepEqual(before, after) {
					return out, true, nil
				}
			}
		}
	}
	return nil, false, fmt.Errorf("%w: agmem cannot rename the deprecated %s to %s without changing how the rest reads", errRenameRefused, w.name(table, key), w)
}

// errRenameRefused is a rename of a deprecated setting agmem cannot make in the text as
// it is written.
var errRenameRefused = errors.New("cannot edit")

// lineEnding is the line ending a text uses.
func lineEnding(src []byte) string {
	if bytes.Contains(src, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
}

// appendTable returns src with a table after it: on a line of its own, a blank line
// between them.
func appendTable(src []byte, table, newline string) []byte {
	out := append([]byte{}, src...)
	if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, newline...)
	}
	if len(bytes.TrimSpace(out)) > 0 {
		out = append(out, newline...)
	}
	return append(out, table...)
}
