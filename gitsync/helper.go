package gitsync

import (
	"context"
	"errors"
	"fmt"
	"os"
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
	// Never a prompt: agmem runs under hooks and the daemon, where no one answers one.
	environ := append(withoutCredentials(os.Environ()), "GIT_TERMINAL_PROMPT=0")
	call := companion.Call{Helper: helper, Dir: dir, Env: append(environ, env...), WaitDelay: time.Second}
	var resp Response
	err := call.Run(ctx, req, &resp)
	if ctx.Err() != nil {
		return Response{Failure: &Failure{Kind: KindUnreachable,
			Message: fmt.Sprintf("no answer within %s ([sync] timeout)", timeout)}}, nil
	}
	return resp, err
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
