package hooks

import (
	"bytes"
	"fmt"
	"reflect"
	"regexp"

	"github.com/BurntSushi/toml"
)

// Switch is a boolean in a TOML file beside the hooks file that must be true for the
// agent to run hooks at all: Codex's [features] codex_hooks.
type Switch struct {
	File    string // in the agent's settings directory
	Table   string
	Key     string   // the key agmem writes
	Aliases []string // keys that mean the same (newer Codex calls it "hooks")
}

// Switch states.
const (
	SwitchOn    = "on"
	SwitchOff   = "off"   // set to false: agmem leaves it so and says it
	SwitchUnset = "unset" // agmem sets it
)

func (w Switch) String() string { return fmt.Sprintf("[%s] %s", w.Table, w.Key) }

// State reads the switch in src: on when a key sets it true and none false.
func (w Switch) State(src []byte) (string, error) {
	var doc map[string]any
	if err := toml.Unmarshal(src, &doc); err != nil {
		return "", fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	table, _ := doc[w.Table].(map[string]any)
	state := SwitchUnset
	for _, k := range append([]string{w.Key}, w.Aliases...) {
		switch v, set := table[k]; {
		case !set:
		case v == false:
			return SwitchOff, nil
		case v == true:
			state = SwitchOn
		default:
			return "", fmt.Errorf("%w: [%s] %s is %v, not true or false", ErrUnreadable, w.Table, k, v)
		}
	}
	return state, nil
}

// Enable returns src with the switch set true: a line under the table's header, or the
// table added at the end. Every other line stays as it was; if the result would read
// differently in any other way (a header inside a multi-line string, a table written
// inline), it refuses rather than guess.
func (w Switch) Enable(src []byte) ([]byte, error) {
	var before map[string]any
	if err := toml.Unmarshal(src, &before); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	newline := "\n"
	if bytes.Contains(src, []byte("\r\n")) {
		newline = "\r\n"
	}
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
		out = append([]byte{}, src...)
		if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
			out = append(out, newline...)
		}
		if len(bytes.TrimSpace(out)) > 0 {
			out = append(out, newline...)
		}
		out = append(out, "["+w.Table+"]"+newline+line...)
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
