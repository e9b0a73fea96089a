//go:build unix && !linux

package priority

import "syscall"

// yield lowers the process's priority, if it is not as low already: outside Linux a
// nice value belongs to the process, and the system call gives it as it is.
func yield() {
	if nice, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0); err == nil && nice < Nice {
		syscall.Setpriority(syscall.PRIO_PROCESS, 0, Nice)
	}
}
