//go:build !linux

package e2e

import (
	"os/exec"
	"testing"
	"time"
)

// isolate skips: only Linux has the network namespaces an agent must run in.
func isolate(t *testing.T) bool {
	skipOrFail(t, "the agents run in a network namespace with only loopback, which needs Linux")
	return false
}

func ownProcessGroup(*exec.Cmd) {}

func waitForOrphans(time.Duration) error { return nil }
