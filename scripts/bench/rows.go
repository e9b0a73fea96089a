package main

import (
	"fmt"
	"os"
)

// row adds a line to the summary table scripts/bench.sh prints at its end: each of
// issue 9's targets beside what this run measured. Without BENCH_ROWS, nothing.
func row(name, target, measured string, met bool) {
	path := os.Getenv("BENCH_ROWS")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return
	}
	defer f.Close()
	verdict := "not met"
	if met {
		verdict = "met"
	}
	fmt.Fprintf(f, "| %s | %s | %s | %s |\n", name, target, measured, verdict)
}
