//go:build unix

package daemon

import "syscall"

// detached makes the daemon the leader of a session of its own, with no terminal: the
// shell that ran `agmem daemon start` can close without taking it along.
func detached() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
