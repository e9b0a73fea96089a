package llm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/agmem/agmem/companion"
)

// grace is how long past the budget agmem waits for the helper to report before
// killing it: enough to start it and write its answer, not enough to notice.
const grace = time.Second

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
	call := companion.Call{Helper: helper, Env: helperEnv(os.Environ(), apiKey), WaitDelay: 100 * time.Millisecond,
		Clean: func(s string) string { return hideKey(s, apiKey) }}
	var resp Response
	err := call.Run(ctx, req, &resp)
	if ctx.Err() != nil {
		return Response{}, &Failure{Message: HelperName + " did not answer within the time budget", TimedOut: true}
	}
	if err != nil {
		return Response{}, err
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
