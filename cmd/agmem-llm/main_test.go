package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestAgmemDoesNotLinkOpenAI guards why this helper exists: openai-go must stay out of
// the agmem binary, whose every start (one per tool call of an agent) would pay for it.
func TestAgmemDoesNotLinkOpenAI(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/agmem/agmem").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/agmem/agmem/llm") {
		t.Fatal("agmem does not link the llm package: is this test still looking at the right binary?")
	}
	for _, dep := range deps {
		if strings.HasPrefix(dep, "github.com/openai/") {
			t.Errorf("agmem links %s: ask through agmem-llm instead", dep)
		}
	}
}
