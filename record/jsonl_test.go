package record

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
)

// A line whose decoding panics is a bad line, not a crash of the goroutine decoding
// it, which would exit 2.
func TestPanicIsABadLine(t *testing.T) {
	res := safely(func() lineResult { panic("a bug") })
	if res.err == nil || !strings.Contains(res.err.Error(), "internal error: a bug") {
		t.Fatalf("safely = %+v, want an internal error", res)
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

// newRecorder is a Recorder of a new memory repo (a directory with .agmem/ in it,
// which is all a Recorder needs), with the built-in configuration.
func newRecorder(t *testing.T) *Recorder {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".agmem"), 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir, Options{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// readLines reads in as Lines does, up to the last transaction, which it leaves out:
// what the staging holds, and what the call would record.
func readLines(t *testing.T, r *Recorder, in io.Reader, limit int) (*bulk, Outcome, error) {
	t.Helper()
	r.maxInput = limit
	b := &bulk{r: r, now: time.Now()}
	t.Cleanup(b.close)
	var out Outcome
	err := b.read(in, &out)
	return b, out, err
}

// closedEmpty closes what b staged, and checks the journal holds nothing of it.
func closedEmpty(t *testing.T, b *bulk) {
	t.Helper()
	if b.staging == nil {
		t.Fatal("nothing was staged: the input is too small for the test")
	}
	b.close()
	j := b.r.journal
	if bl, err := j.Backlog(); err != nil || !bl.Empty() {
		t.Fatalf("Backlog = %+v, %v; want nothing", bl, err)
	}
	if findings, err := j.Check(); err != nil || len(findings) > 0 {
		t.Fatalf("Check = %q, %v", findings, err)
	}
}

// An opt-out file found after parts were staged keeps its line out, and only it: the
// other lines are recorded, staged or not.
func TestOptOutAfterAStagedPart(t *testing.T) {
	r := newRecorder(t)
	dir := t.TempDir()
	off := filepath.Join(dir, "off")
	if err := os.MkdirAll(off, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(off, capture.OptOutFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := r.Lines(strings.NewReader(hookLines(4000, dir) + hookLines(1, off) + hookLines(300, dir)))
	if err != nil || len(out.Recorded) != 4300 || len(out.NotCaptured) != 1 || !strings.Contains(out.NotCaptured[0], off) {
		t.Fatalf("Lines: %d recorded, not captured %q, %v; want 4300, and the opted-out line", len(out.Recorded), out.NotCaptured, err)
	}
	// The last 300 lines are the first 300 again: the same calls, kept once.
	if bl, err := r.journal.Backlog(); err != nil || bl.Observations != 4000 {
		t.Fatalf("Backlog = %+v, %v; want 4000 observations", bl, err)
	}
	if findings, err := r.journal.Check(); err != nil || len(findings) > 0 {
		t.Fatalf("Check = %q, %v", findings, err)
	}
}

// A read error after parts were staged fails the call, which leaves nothing behind.
func TestReadErrorAfterAStagedPart(t *testing.T) {
	r := newRecorder(t)
	cut := errors.New("cut")
	in := io.MultiReader(strings.NewReader(hookLines(4000, t.TempDir())), iotest.ErrReader(cut))
	b, _, err := readLines(t, r, in, 1<<20)
	if !errors.Is(err, cut) {
		t.Fatalf("read: %v, want the read error", err)
	}
	closedEmpty(t, b)
	if out, err := newRecorder(t).Lines(io.MultiReader(strings.NewReader(hookLines(10, t.TempDir())), iotest.ErrReader(cut))); !errors.Is(err, cut) || len(out.Recorded) != 0 {
		t.Errorf("Lines with a read error: %d recorded, %v", len(out.Recorded), err)
	}
}

// Bad lines are reported in their order, a line too long among them, across chunks.
func TestBadLinesInOrder(t *testing.T) {
	r := newRecorder(t)
	lines := strings.Split(strings.TrimSuffix(hookLines(700, t.TempDir()), "\n"), "\n")
	lines[2] = `{"tool_name":`
	lines[299] = `{"tool_name":"Read","result":"` + strings.Repeat("x", 5000) + `"}`
	lines[699] = `not json`
	b, out, err := readLines(t, r, strings.NewReader(strings.Join(lines, "\n")), 4096)
	if err != nil {
		t.Fatal(err)
	}
	var numbers []string
	for _, bad := range out.Refused {
		numbers = append(numbers, strings.SplitN(bad.Error(), ":", 2)[0])
	}
	if want := []string{"line 3", "line 300", "line 700"}; !slices.Equal(numbers, want) || !strings.Contains(out.Refused[1].Error(), "longer than") {
		t.Fatalf("bad lines %q, want %v", out.Refused, want)
	}
	if len(b.entries) != 697 {
		t.Errorf("%d entries, want 697", len(b.entries))
	}
}
