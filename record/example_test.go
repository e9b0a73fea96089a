package record_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/agmem/agmem/record"
)

// A Go program that drives an agent records its tool calls and session events into a
// memory repo in process, with the guarantees of agmem's hooks: one transaction a call,
// durable when it returns, redacted, captured by the same rules. "agmem flush" (or the
// daemon) commits them to git later.
func ExampleRecorder_Record() {
	// A memory repo, as "agmem init" makes one.
	repo, err := os.MkdirTemp("", "agent-memory-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(repo)
	if err := os.Mkdir(filepath.Join(repo, ".agmem"), 0o755); err != nil {
		log.Fatal(err)
	}

	r, err := record.Open(repo, record.Options{Session: "run-42"})
	if err != nil {
		log.Fatal(err)
	}
	build := record.Observation{
		Tool:      "run_command",
		ToolUseID: "call-1",
		Arguments: map[string]any{"command": "make build"},
		Result:    "main.go:12: undefined: parseConfig\nmake: *** [Makefile:4: build] Error 1",
		Error:     "exit status 2",
		Duration:  1500 * time.Millisecond,
	}
	out, err := r.Record(
		record.Event{Name: "UserPromptSubmit", Text: "Why does the build fail?"},
		build,
		// Not worth keeping: agmem's capture rules leave out echo.
		record.Observation{Tool: "echo", Arguments: map[string]any{"text": "hi"}, Result: "hi"},
	)
	if err != nil {
		log.Fatal(err)
	}
	for _, rec := range out.Recorded {
		fmt.Printf("recorded: event %v, %d characters of id\n", rec.Event, len(rec.ID))
	}
	fmt.Println("not captured:", out.NotCaptured)

	// The same call again (a retry) is kept once.
	again, err := r.Record(build)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("recorded before:", again.Recorded[0].Duplicate)
	// Output:
	// recorded: event true, 26 characters of id
	// recorded: event false, 26 characters of id
	// not captured: [echo: tool "echo" is ignored]
	// recorded before: true
}
