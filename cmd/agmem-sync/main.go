// Command agmem-sync talks to git remotes for `agmem push` and `agmem pull`; people do
// not run it.
//
// It reads one gitsync.Request (JSON) on standard input and writes one gitsync.Response
// (JSON) on standard output. Credentials come from its environment, which agmem sets:
// never from the request, nor from the command line, which ps shows to every user.
//
// It is a program of its own so that go-git's transports (net/http, ssh) are linked
// here and not into agmem, whose `record` starts on every tool call of an agent:
// linking them costs each start of agmem about a millisecond.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/agmem/agmem/gitsync"
	"github.com/agmem/agmem/gitsync/transport"
)

const maxRequestBytes = 1 << 20

func main() {
	var req gitsync.Request
	if err := json.NewDecoder(io.LimitReader(os.Stdin, maxRequestBytes)).Decode(&req); err != nil {
		fmt.Fprintf(os.Stderr, "agmem-sync: read the request on standard input: %v\n", err)
		os.Exit(1)
	}
	// agmem kills this process when its time is up: no deadline of its own.
	resp := transport.Serve(context.Background(), req, os.Getenv)
	if err := json.NewEncoder(os.Stdout).Encode(resp); err != nil {
		fmt.Fprintf(os.Stderr, "agmem-sync: write the response: %v\n", err)
		os.Exit(1)
	}
}
