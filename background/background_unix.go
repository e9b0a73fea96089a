//go:build unix && !linux

package background

import "syscall"

// yield sets the process's priority: outside Linux a nice value belongs to the process.
func yield() { syscall.Setpriority(syscall.PRIO_PROCESS, 0, Nice) }
