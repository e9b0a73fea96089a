package gitsync

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

// ErrNoHelper is returned when agmem-sync is not where it was configured to be, or,
// when not configured, neither beside agmem nor on $PATH.
var ErrNoHelper = errors.New(HelperName + " not found")

// findHelper returns the agmem-sync to run: configured (a path, or a name looked up on
// $PATH) when it is not "", else the one beside the running agmem, else the first on
// $PATH, as agmem-llm is found.
func findHelper(configured string) (string, error) {
	return companion.Find(HelperName, configured, "[sync] helper or $AGMEM_SYNC_HELPER", ErrNoHelper)
}

// ask runs the helper in dir with req on its standard input and env added to agmem's
// environment, and kills it once timeout has passed.
func ask(helper, dir string, req Request, env []string, timeout time.Duration) (Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	in, err := json.Marshal(req)
	if err != nil {
		return Response{}, err
	}
	cmd := exec.CommandContext(ctx, helper)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Never a prompt: agmem runs under hooks and the daemon, where no one answers one.
	cmd.Env = append(withoutCredentials(os.Environ()), "GIT_TERMINAL_PROMPT=0")
	cmd.Env = append(cmd.Env, env...)
	cmd.WaitDelay = time.Second // a git process the helper started must not keep agmem waiting
	err = cmd.Run()
	if ctx.Err() != nil {
		return Response{Failure: &Failure{Kind: KindUnreachable,
			Message: fmt.Sprintf("no answer within %s ([sync] timeout)", timeout)}}, nil
	}
	if err != nil {
		return Response{}, fmt.Errorf("%s: %w: %s", helper, err, firstLine(stderr.String()))
	}
	var resp Response
	if err := json.Unmarshal(stdout.Bytes(), &resp); err != nil {
		return Response{}, fmt.Errorf("%s: unreadable response: %w", helper, err)
	}
	return resp, nil
}

// withoutCredentials drops the credential variables from environ, so that the ones
// agmem resolved (from the environment or its configuration file) are the only ones.
func withoutCredentials(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		if !strings.HasPrefix(kv, EnvUsername+"=") && !strings.HasPrefix(kv, EnvPassword+"=") {
			out = append(out, kv)
		}
	}
	return out
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
