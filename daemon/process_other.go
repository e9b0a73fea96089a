//go:build !unix

package daemon

import "syscall"

// detached has no session to make outside unix.
func detached() *syscall.SysProcAttr { return nil }
