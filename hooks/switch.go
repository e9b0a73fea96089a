package hooks

import (
	"fmt"
	"strings"
)

// Switch is a boolean setting that must be true for the agent to run hooks at all:
// Codex's [features] codex_hooks in config.toml, beside its hooks.json; Gemini CLI's
// hooksConfig.enabled in settings.json, the file its hooks are in. Installing sets it
// when it is unset; one set false is left so, with a warning; uninstalling leaves it on,
// since other hooks may need it.
type Switch struct {
	File    string   // in the agent's settings directory: TOML if it ends in .toml, else the agent's hooks file
	Table   string   // the TOML table, or the top-level JSON object, that holds it
	Key     string   // the key agmem writes
	Aliases []string // "table.key": older or newer names the agent reads too, never written
	// Deprecated ("table.key") is a name the agent still reads but warns of on every run:
	// installing renames it to Key, its value kept. Only a TOML file has one.
	Deprecated string
}

// Switch states.
const (
	SwitchOn    = "on"
	SwitchOff   = "off"   // set to false: agmem leaves it so and says it
	SwitchUnset = "unset" // agmem sets it
)

func (w Switch) String() string { return w.name(w.Table, w.Key) }

func (w Switch) toml() bool { return strings.HasSuffix(w.File, ".toml") }

// name is how people write a setting of the switch's file: "[features] codex_hooks",
// "hooksConfig.enabled".
func (w Switch) name(table, key string) string {
	if w.toml() {
		return fmt.Sprintf("[%s] %s", table, key)
	}
	return table + "." + key
}

// names are the switch's settings, the one agmem writes first, each as table and key.
func (w Switch) names() [][2]string {
	names := [][2]string{{w.Table, w.Key}}
	for _, a := range append(w.Aliases, w.Deprecated) {
		if a == "" {
			continue
		}
		table, key, _ := strings.Cut(a, ".")
		names = append(names, [2]string{table, key})
	}
	return names
}

// State reads the switch in its file's text: on when a setting of it is true and none
// false. In JSON an alias that is not true or false is not the switch (Gemini CLI once
// read "hooks.enabled", a name that is now an event's), while in TOML it is an error.
func (w Switch) State(src []byte) (string, error) {
	state, _, err := w.read(src)
	return state, err
}

// read is State, and which setting decided: the one set false, else the one agmem writes.
func (w Switch) read(src []byte) (state, setting string, err error) {
	if w.toml() {
		return w.readTOML(src)
	}
	d, err := parseDocument(src, true)
	if err != nil {
		return "", "", fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	return w.readJSON(d)
}

// Enable returns src with the switch set true, every other byte as it was.
func (w Switch) Enable(src []byte) ([]byte, error) {
	if w.toml() {
		return w.enableTOML(src)
	}
	d, err := parseDocument(src, true)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	if _, _, err := w.readJSON(d); err != nil {
		return nil, err
	}
	return w.enableJSON(d), nil
}

func (w Switch) readJSON(d *document) (state, setting string, err error) {
	state, setting = SwitchUnset, w.String()
	for i, n := range w.names() {
		table, _ := d.root.get(n[0])
		if table == nil {
			continue
		}
		if table.kind != '{' {
			if i == 0 {
				return "", "", fmt.Errorf("%w: its %q is not an object", ErrUnreadable, n[0])
			}
			continue
		}
		v, _ := table.get(n[1])
		if v == nil {
			continue
		}
		switch text := string(d.plain[v.start:v.end]); {
		case text == "false":
			return SwitchOff, w.name(n[0], n[1]), nil
		case text == "true":
			state = SwitchOn
		case i == 0:
			return "", "", fmt.Errorf("%w: its %s is %s, not true or false", ErrUnreadable, w, text)
		}
	}
	return state, setting, nil
}

// enableJSON adds the switch, true, to its object, or the object to the settings.
func (w Switch) enableJSON(d *document) []byte {
	if table, _ := d.root.get(w.Table); table != nil {
		return d.add(table, w.Key, true)
	}
	return d.add(d.root, w.Table, map[string]bool{w.Key: true})
}
