package llm

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agmem/agmem/memory"
)

func observation(tool, summary string) memory.Observation {
	return memory.Observation{ToolName: tool, Summary: summary, MemoryType: memory.Episodic,
		Arguments: json.RawMessage(`{"token":"sk-argument-secret"}`), Result: json.RawMessage(`"result-secret"`)}
}

func many(n int, tool string) []memory.Observation {
	var obs []memory.Observation
	for i := range n {
		obs = append(obs, observation(tool, fmt.Sprintf("%s step=%d", tool, i)))
	}
	return obs
}

func TestPromptFor(t *testing.T) {
	tests := []struct {
		name     string
		obs      []memory.Observation
		contains []string
		lines    int // of observations listed one by one
	}{
		{"each observation by type and summary",
			[]memory.Observation{observation("Bash", "Bash command=go test"), observation("Read", "")},
			[]string{"- [episodic] Bash command=go test\n", "- [episodic] Read\n"}, 2},
		{"a summary is made one line and cut",
			[]memory.Observation{observation("Bash", "Bash\ncommand=x\rAgain "+strings.Repeat("y", 500))},
			[]string{"- [episodic] Bash command=x Again yyy"}, 1},
		{"the first 20, then counts per tool",
			append(many(21, "Bash"), many(4, "Read")...),
			[]string{"- [episodic] Bash step=19\n", "... and 5 more observations: Read 4, Bash 1\n"}, 20},
		{"at most 10 tools by name",
			func() []memory.Observation {
				obs := many(20, "Bash")
				for i := range 13 {
					obs = append(obs, many(13-i, fmt.Sprintf("tool%02d", i))...)
				}
				return obs
			}(),
			[]string{"tool00 13, tool01 12,", "tool09 4, 3 other tools 6\n"}, 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := PromptFor(tc.obs)
			if p.System != systemPrompt {
				t.Errorf("system prompt is %q", p.System)
			}
			for _, want := range tc.contains {
				if !strings.Contains(p.User, want) {
					t.Errorf("prompt lacks %q:\n%s", want, p.User)
				}
			}
			if n := strings.Count(p.User, "\n- ["); n != tc.lines {
				t.Errorf("prompt lists %d observations, want %d:\n%s", n, tc.lines, p.User)
			}
			if strings.Contains(p.User, "secret") {
				t.Errorf("prompt holds an argument or a result:\n%s", p.User)
			}
		})
	}
}

// TestPromptForIsBounded feeds the largest observations input allows: the prompt stays
// small whatever the batch.
func TestPromptForIsBounded(t *testing.T) {
	var obs []memory.Observation
	for i := range 10_000 {
		obs = append(obs, observation(fmt.Sprintf("%d%s", i, strings.Repeat("t", 300)), strings.Repeat("s", 5000)))
	}
	if p := PromptFor(obs); len(p.User) > 8<<10 {
		t.Errorf("prompt of %d bytes for %d observations", len(p.User), len(obs))
	}
}
