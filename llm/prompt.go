package llm

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/agmem/agmem/memory"
)

const (
	promptObservations = 20  // listed one by one, as the Python agmem did; the rest are counted
	promptLineRunes    = 200 // of one listed observation
	promptTools        = 10  // counted by name; the rest are counted together
	promptToolRunes    = 64  // of one tool name in the counts
)

// systemPrompt is the Python agmem's requirements for a commit message.
const systemPrompt = `You write Git commit messages for the work of an AI agent.

Requirements:
- Subject line: max 50 chars, imperative mood (e.g., "Implement", "Fix", "Update")
- Body: bullet points of key changes (optional if simple)
- Focus on WHAT was accomplished, not individual tool calls

Output only the commit message, no explanations.`

// PromptFor asks for the message of a commit holding obs. It tells the model each of the
// first 20 observations' memory type and summary (its tool name when it has none), then
// how many more there are per tool, and nothing else: no arguments, no results. Its size
// is bounded whatever obs holds.
func PromptFor(obs []memory.Observation) Prompt {
	var b strings.Builder
	b.WriteString("Generate a concise Git-style commit message for these agent observations:\n\n")
	listed := obs[:min(len(obs), promptObservations)]
	for i := range listed {
		o := &listed[i]
		text := o.Summary
		if strings.TrimSpace(text) == "" {
			text = o.ToolName
		}
		fmt.Fprintf(&b, "- [%s] %s\n", promptText(string(o.MemoryType), 16), promptText(text, promptLineRunes))
	}
	if rest := obs[len(listed):]; len(rest) > 0 {
		fmt.Fprintf(&b, "... and %d more observations: %s\n", len(rest), toolCounts(rest))
	}
	return Prompt{System: systemPrompt, User: b.String()}
}

// toolCounts says how many of obs each tool made, most first: "Bash 20, Read 3".
func toolCounts(obs []memory.Observation) string {
	counts := map[string]int{}
	for i := range obs {
		counts[promptText(obs[i].ToolName, promptToolRunes)]++
	}
	type tool struct {
		name string
		n    int
	}
	var tools []tool
	for name, n := range counts {
		tools = append(tools, tool{name, n})
	}
	slices.SortFunc(tools, func(a, b tool) int {
		return cmp.Or(cmp.Compare(b.n, a.n), strings.Compare(a.name, b.name))
	})
	var parts []string
	for _, t := range tools[:min(len(tools), promptTools)] {
		parts = append(parts, fmt.Sprintf("%s %d", t.name, t.n))
	}
	if others := tools[len(parts):]; len(others) > 0 {
		n := 0
		for _, t := range others {
			n += t.n
		}
		parts = append(parts, fmt.Sprintf("%d other tools %d", len(others), n))
	}
	return strings.Join(parts, ", ")
}

// promptText is s as one line of at most n runes.
func promptText(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
	return strings.TrimSpace(cutRunes(strings.TrimSpace(s), n))
}

// cutRunes keeps the first n runes of s.
func cutRunes(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}
