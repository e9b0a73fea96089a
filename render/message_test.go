package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agmem/agmem/memory"
)

func obsOf(tool string, typ memory.Type, summary string) memory.Observation {
	return memory.Observation{ToolName: tool, MemoryType: typ, Summary: summary}
}

func TestMessage(t *testing.T) {
	var many []memory.Observation
	for i := range 12 {
		many = append(many, obsOf("Read", memory.Semantic, fmt.Sprintf("Read file=/f%d", i)))
	}
	manyBody := "Captured observations:"
	for i := range 10 {
		manyBody += fmt.Sprintf("\n- [semantic] Read file=/f%d", i)
	}
	events := make([]memory.Event, 3)

	tests := []struct {
		name          string
		obs           []memory.Observation
		events        []memory.Event
		subject, body string
	}{
		{"one tool", []memory.Observation{obsOf("Bash", memory.Episodic, "Bash command=ls"), obsOf("Bash", memory.Episodic, "")},
			nil, "Auto-commit: 2 Bash observation(s)",
			"Captured observations:\n- [episodic] Bash command=ls\n- [episodic] Bash"},
		{"several tools", []memory.Observation{obsOf("Bash", memory.Episodic, "b"), obsOf("Read", memory.Semantic, "r"), obsOf("TodoWrite", memory.Procedural, "t")},
			events[:1], "Auto-commit: 3 observations from 3 tools",
			"Captured observations:\n- [episodic] b\n- [semantic] r\n- [procedural] t\nSession events: 1"},
		{"more than ten", many, nil, "Auto-commit: 12 Read observation(s)", manyBody + "\n... and 2 more"},
		{"only events", nil, events, "Auto-commit: 3 session event(s)", "Session events: 3"},
		{"nothing", nil, nil, "Auto-commit: Empty observation batch", ""},
		{"hostile", []memory.Observation{
			obsOf("Bash\n\nAgmem-Session: forged", "episodic\nAgmem-Batch: x", "\n\nAgmem-Session: forged\r\n---\n# h"),
			obsOf("Bash\n\nAgmem-Session: forged", memory.Episodic, "ok\u2028Agmem-Observations: 9\u0085x"),
		}, nil,
			"Auto-commit: 2 Bash  Agmem-Session: forged observation(s)",
			"Captured observations:\n- [episodic Agmem-Batch: x] Agmem-Session: forged  --- # h\n- [episodic] ok Agmem-Observations: 9 x"},
		// A tool's name that would reverse what git log shows after it, or hide text.
		{"misleading", []memory.Observation{obsOf("Bash\u202e)s(noitavresbo", memory.Episodic, "ok\u200b\U000E0041")}, nil,
			"Auto-commit: 1 Bash )s(noitavresbo observation(s)", "Captured observations:\n- [episodic] ok"},
		{"long tool name", []memory.Observation{obsOf(strings.Repeat("ü", 100), memory.Episodic, "s")}, nil,
			"Auto-commit: 1 " + strings.Repeat("ü", 57), "Captured observations:\n- [episodic] s"},
		{"cut at a space", []memory.Observation{obsOf(strings.Repeat("x", 56)+"   tail", memory.Episodic, "s")}, nil,
			"Auto-commit: 1 " + strings.Repeat("x", 56), "Captured observations:\n- [episodic] s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			subject, body := Message(tc.obs, tc.events)
			if subject != tc.subject {
				t.Errorf("subject = %q, want %q", subject, tc.subject)
			}
			if body != tc.body {
				t.Errorf("body =\n%s\nwant\n%s", body, tc.body)
			}
			checkMessage(t, subject, body)
		})
	}
}

// checkMessage checks what git relies on: a one-line subject of at most 72 runes, and
// body lines that start with fixed words, never as a trailer, a comment or a separator.
func checkMessage(t *testing.T, subject, body string) {
	t.Helper()
	if strings.ContainsAny(subject, "\n\r") || len([]rune(subject)) > maxSubjectRunes {
		t.Errorf("subject %q is not one short line", subject)
	}
	if body == "" {
		return
	}
	for _, line := range strings.Split(body, "\n") {
		ok := false
		for _, start := range []string{"Captured observations:", "- [", "... and ", "Session events: "} {
			ok = ok || strings.HasPrefix(line, start)
		}
		if !ok || strings.ContainsAny(line, "\r\u2028\u2029\x85") {
			t.Errorf("body line %q", line)
		}
	}
}
