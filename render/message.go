package render

import (
	"fmt"
	"strings"

	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/memory"
)

const (
	maxSubjectRunes = 72 // what git log --oneline and most tools show without wrapping
	maxListed       = 10 // observations listed by name, as in the Python agmem
)

// Message is the Python agmem's template commit message, without trailers (vcs adds
// those). Subject and body hold no trailing newline; the caller joins them with a blank
// line.
//
// The subject is "Auto-commit: N <tool> observation(s)" when all observations share a
// tool, "Auto-commit: N observations from K tools" otherwise, "Auto-commit: N session
// event(s)" when there are only events, cut to 72 runes. The body is "Captured
// observations:", a "- [<memory_type>] <summary or tool>" line for each of the first 10,
// "... and M more", then "Session events: <count>" when there are events.
//
// Input text is made one line, and every body line starts with fixed words or "- [", so
// no input can start a line that git would read as a trailer.
func Message(obs []memory.Observation, events []memory.Event) (subject, body string) {
	var lines []string
	switch {
	case len(obs) > 0:
		tools := map[string]bool{}
		for i := range obs {
			tools[obs[i].ToolName] = true
		}
		if len(tools) == 1 {
			subject = fmt.Sprintf("Auto-commit: %d %s observation(s)", len(obs), messageText(obs[0].ToolName))
		} else {
			subject = fmt.Sprintf("Auto-commit: %d observations from %d tools", len(obs), len(tools))
		}
		lines = append(lines, "Captured observations:")
		for i := range obs[:min(len(obs), maxListed)] {
			lines = append(lines, fmt.Sprintf("- [%s] %s", messageText(string(obs[i].MemoryType)), messageText(title(&obs[i]))))
		}
		if len(obs) > maxListed {
			lines = append(lines, fmt.Sprintf("... and %d more", len(obs)-maxListed))
		}
	case len(events) > 0:
		subject = fmt.Sprintf("Auto-commit: %d session event(s)", len(events))
	default:
		subject = "Auto-commit: Empty observation batch"
	}
	if len(events) > 0 {
		lines = append(lines, fmt.Sprintf("Session events: %d", len(events)))
	}
	return cutRunes(subject, maxSubjectRunes), strings.Join(lines, "\n")
}

// messageText is oneLine, with what misleads (hint.Misleads) a space too, and no space
// at its ends: a tool named with a right-to-left override had git log show what
// followed it reversed. Only the message: the markdown files stay as audit renders
// them again.
func messageText(s string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if hint.Misleads(r) {
			return ' '
		}
		return r
	}, oneLine(s)))
}

// cutRunes keeps the first n runes of s, without the spaces a cut may leave at the end.
func cutRunes(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return strings.TrimRight(s[:pos], " ")
		}
		i++
	}
	return s
}
