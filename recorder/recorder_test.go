package recorder

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/agmem/agmem/capture"
	"github.com/agmem/agmem/internal/config"
	"github.com/agmem/agmem/journal"
)

// A line whose decoding panics is a bad line, not a crash of the goroutine decoding
// it, which would exit 2.
func TestPanicIsABadLine(t *testing.T) {
	res := safely(func() lineResult { panic("a bug") })
	if res.err == nil || !strings.Contains(res.err.Error(), "internal error: a bug") {
		t.Fatalf("safely = %+v, want an internal error", res)
	}
}

// A directory's opt-out file is looked for once per record call, however many lines
// name the directory.
func TestOptOutsLooksOncePerDirectory(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	optOut := filepath.Join(dir, capture.OptOutFile)
	if err := os.WriteFile(optOut, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var seen optOuts
	if got := seen.of(sub); got != dir {
		t.Fatalf("of(%s) = %q, want %q", sub, got, dir)
	}
	os.Remove(optOut)
	if got := seen.of(sub); got != dir {
		t.Errorf("of(%s) looked again: %q", sub, got)
	}
	if got := seen.of(""); got != "" {
		t.Errorf(`of("") = %q`, got)
	}
}

// hookLines are n PostToolUse payloads in directory cwd, one a line, each with 2 KiB of
// a result that does not compress: n of 4,000 make more than one part (stagePart).
func hookLines(n int, cwd string) string {
	rnd := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for i := range n {
		result := make([]byte, 1024)
		for k := range result {
			result[k] = byte(rnd.Uint32())
		}
		fmt.Fprintf(&b, `{"session_id":"s","cwd":%q,"hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{"file_path":"f%d"},"tool_response":"%x","tool_use_id":"toolu_%d"}`+"\n", cwd, i, result, i)
	}
	return b.String()
}

func decodeInto(t *testing.T, j *journal.Journal, r io.Reader, limit int) (decodedLines, error) {
	t.Helper()
	policy, err := config.Default().Policy()
	if err != nil {
		t.Fatal(err)
	}
	var seen optOuts
	all, err := decodeLines(r, policy, limit, time.Now(), "", &seen, j)
	if all.staging != nil {
		t.Cleanup(func() { all.staging.Close() })
	}
	return all, err
}

// closedEmpty closes what all staged, and checks the journal holds nothing of it.
func closedEmpty(t *testing.T, j *journal.Journal, all decodedLines) {
	t.Helper()
	if all.staging == nil {
		t.Fatal("nothing was staged: the input is too small for the test")
	}
	if err := all.staging.Close(); err != nil {
		t.Fatal(err)
	}
	if b, err := j.Backlog(); err != nil || !b.Empty() {
		t.Fatalf("Backlog = %+v, %v; want nothing", b, err)
	}
	if findings, err := j.Check(); err != nil || len(findings) > 0 {
		t.Fatalf("Check = %q, %v", findings, err)
	}
}

// An opt-out file found after parts were staged: the call records nothing, and holds
// nothing more.
func TestOptOutAfterAStagedPart(t *testing.T) {
	dir := t.TempDir()
	j := journal.At(dir)
	off := filepath.Join(dir, "off")
	if err := os.MkdirAll(off, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(off, capture.OptOutFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	all, err := decodeInto(t, j, strings.NewReader(hookLines(4000, dir)+hookLines(1, off)+hookLines(300, dir)), 1<<20)
	if err != nil || all.optedOut != off || len(all.entries) != 0 {
		t.Fatalf("decodeLines: opted out by %q, %d entries held, %v", all.optedOut, len(all.entries), err)
	}
	closedEmpty(t, j, all)
}

// A read error after parts were staged fails the call, which leaves nothing behind.
func TestReadErrorAfterAStagedPart(t *testing.T) {
	dir := t.TempDir()
	j := journal.At(dir)
	cut := errors.New("cut")
	r := io.MultiReader(strings.NewReader(hookLines(4000, dir)), iotest.ErrReader(cut))
	all, err := decodeInto(t, j, r, 1<<20)
	if !errors.Is(err, cut) {
		t.Fatalf("decodeLines: %v, want the read error", err)
	}
	closedEmpty(t, j, all)
}

// Bad lines are reported in their order, a line too long among them, across chunks.
func TestBadLinesInOrder(t *testing.T) {
	dir := t.TempDir()
	lines := strings.Split(strings.TrimSuffix(hookLines(700, dir), "\n"), "\n")
	lines[2] = `{"tool_name":`
	lines[299] = `{"tool_name":"Read","result":"` + strings.Repeat("x", 5000) + `"}`
	lines[699] = `not json`
	all, err := decodeInto(t, journal.At(dir), strings.NewReader(strings.Join(lines, "\n")), 4096)
	if err != nil {
		t.Fatal(err)
	}
	var numbers []string
	for _, bad := range all.bad {
		numbers = append(numbers, strings.SplitN(bad, ":", 2)[0])
	}
	if want := []string{"line 3", "line 300", "line 700"}; !slices.Equal(numbers, want) || !strings.Contains(all.bad[1], "longer than") {
		t.Fatalf("bad lines %q, want %v", all.bad, want)
	}
	if len(all.entries) != 697 {
		t.Errorf("%d entries, want 697", len(all.entries))
	}
}
