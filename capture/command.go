package capture

import (
	"encoding/json"
	"strings"

	"github.com/agmem/agmem/internal/jsonscan"
	"github.com/agmem/agmem/redact"
)

// Command is the command a call's arguments ran ("command", or "cmd" as some agents
// name it), or "": commandJSON's answer, read in one pass with jsonscan where that
// says it can (capture and the index ask of every call), and left to commandJSON where
// it cannot or the command is a list.
func Command(args json.RawMessage) string {
	var values [len(commandKeys)][]byte
	s := jsonscan.New(args)
	if !s.Fields(commandKeys[:], 0, func(s *jsonscan.Scanner, k int) bool {
		v, err := s.Skip(1)
		values[k] = v
		return err == nil
	}) || !s.End() {
		return commandJSON(args)
	}
	for _, v := range values {
		switch {
		case len(v) == 0: // absent
		case v[0] == '"':
			text := jsonscan.New(v)
			if command, err := text.Unquote(); err == nil && command != "" {
				return command
			}
		case v[0] == '[':
			return commandJSON(args)
		}
		// Anything else (null, a number, an object) holds no command, as for commandJSON.
	}
	return ""
}

var commandKeys = [...]string{"command", "cmd"}

// commandJSON is Command, with encoding/json.
func commandJSON(args json.RawMessage) string {
	var a struct {
		Command json.RawMessage `json:"command"`
		Cmd     json.RawMessage `json:"cmd"`
	}
	if json.Unmarshal(args, &a) != nil {
		return ""
	}
	for _, raw := range []json.RawMessage{a.Command, a.Cmd} {
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
		var words []string // ["bash", "-lc", "…"]: Codex's shell and exec_command
		if json.Unmarshal(raw, &words) == nil && len(words) > 0 {
			if at := redact.ShellCommandAt(words); at > 0 && at == len(words)-1 {
				return words[at] // the command the shell was given, as the agent wrote it
			}
			return strings.Join(words, " ")
		}
	}
	return ""
}
