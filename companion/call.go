package companion

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Call is one run of a helper: a JSON request on its standard input, a JSON response
// on its standard output.
type Call struct {
	Helper string
	Dir    string   // where it runs; "" for agmem's own directory
	Env    []string // its whole environment
	// WaitDelay bounds the wait for the pipes once the helper has exited: a process it
	// started must not keep agmem waiting.
	WaitDelay time.Duration
	// Clean passes over the helper's error output before it goes into an error agmem
	// prints (to hide a key it may hold); nil leaves it as it is.
	Clean func(string) string
}

// maxResponse bounds what agmem reads of a helper's output, so that one gone wrong
// cannot fill agmem's memory; a pull naming thousands of branches stays well under it.
const maxResponse = 16 << 20

// Run runs the helper until ctx is done, with req as JSON on its standard input, and
// decodes its response into resp. Once ctx is done it returns ctx's error, for the
// caller to say what the time budget was. A helper that fails gives an error with the
// first line it wrote to its standard error.
func (c Call) Run(ctx context.Context, req, resp any) error {
	in, err := json.Marshal(req)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, c.Helper)
	cmd.Dir, cmd.Env, cmd.WaitDelay = c.Dir, c.Env, c.WaitDelay
	cmd.Stdin = bytes.NewReader(in)
	stdout, stderr := &cappedBuffer{max: maxResponse}, &cappedBuffer{max: 4 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err = cmd.Run()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		said, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		if c.Clean != nil {
			said = c.Clean(said)
		}
		return fmt.Errorf("%s: %w: %s", c.Helper, err, said)
	}
	if err := json.Unmarshal(stdout.Bytes(), resp); err != nil {
		return fmt.Errorf("%s: unreadable response: %w", c.Helper, err)
	}
	return nil
}

// cappedBuffer keeps the first max bytes written to it and drops the rest.
type cappedBuffer struct {
	bytes.Buffer
	max int
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
