package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/agmem/agmem/companion"
)

const (
	// grace is how long past the budget agmem waits for the helper to report before
	// killing it: enough to start it and write its answer, not enough to notice.
	grace = time.Second
	// maxResponseBytes bounds what agmem reads of the helper's output.
	maxResponseBytes = 1 << 20
)

// ErrNoHelper is returned when agmem-llm is not where it was configured to be, or, when
// not configured, neither beside agmem nor on $PATH.
var ErrNoHelper = errors.New(HelperName + " not found")

// FindHelper returns the agmem-llm to run: configured (a path, or a name looked up on
// $PATH) when it is not "", else the one beside the running agmem, else the first on
// $PATH. Installing agmem with its helper puts them side by side, so the pair found
// first is the pair built together.
func FindHelper(configured string) (string, error) {
	return companion.Find(HelperName, configured, "[llm] helper or $AGMEM_LLM_HELPER", ErrNoHelper)
}

// ask runs the helper with req on its standard input and apiKey in its environment,
// and kills it if it has not answered by req's deadline and a grace.
func ask(helper string, req Request, apiKey string) (Response, error) {
	ctx, cancel := context.WithDeadline(context.Background(), req.Deadline.Add(grace))
	defer cancel()
	in, err := json.Marshal(req)
	if err != nil {
		return Response{}, err
	}
	cmd := exec.CommandContext(ctx, helper)
	cmd.Stdin = bytes.NewReader(in)
	stdout := &cappedBuffer{max: maxResponseBytes}
	stderr := &cappedBuffer{max: 4 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.Env = helperEnv(os.Environ(), apiKey)
	cmd.WaitDelay = 100 * time.Millisecond // a child of the helper must not keep agmem waiting on the pipes
	err = cmd.Run()
	if ctx.Err() != nil {
		return Response{}, &Failure{Message: HelperName + " did not answer within the time budget", TimedOut: true}
	}
	if err != nil {
		return Response{}, fmt.Errorf("%s: %w: %s", helper, err, hideKey(firstLine(stderr.String()), apiKey))
	}
	var resp Response
	if err := json.Unmarshal(stdout.Bytes(), &resp); err != nil {
		return Response{}, fmt.Errorf("%s: unreadable response: %w", helper, err)
	}
	if len(resp.Answers) != len(req.Prompts) {
		return Response{}, fmt.Errorf("%s: %d answers to %d prompts", helper, len(resp.Answers), len(req.Prompts))
	}
	if resp.Failure != nil {
		resp.Failure.Message = hideKey(resp.Failure.Message, apiKey)
	}
	return resp, nil
}

// hideKey keeps the API key out of text agmem prints, should a server or the helper
// have put it there. A key too short to be secret is left alone, or "ok" would vanish
// from every message for the key "ok".
func hideKey(text, apiKey string) string {
	if len(apiKey) < 8 {
		return text
	}
	return strings.ReplaceAll(text, apiKey, "****")
}

// helperEnv is agmem's environment with the API key as OPENAI_API_KEY, and no other
// variable holding it.
func helperEnv(environ []string, apiKey string) []string {
	env := make([]string, 0, len(environ)+1)
	for _, kv := range environ {
		if !strings.HasPrefix(kv, "OPENAI_API_KEY=") && !strings.HasPrefix(kv, "AGMEM_LLM_API_KEY=") {
			env = append(env, kv)
		}
	}
	return append(env, "OPENAI_API_KEY="+apiKey)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// cappedBuffer keeps the first max bytes written to it and drops the rest, so that a
// helper gone wrong cannot fill agmem's memory.
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
