package priority

import (
	"os"
	"strconv"
	"syscall"
)

// yield lowers every thread's priority: on Linux a nice value belongs to a thread, and a
// new thread takes its creator's. The Go runtime has started several threads by now;
// the list is read twice to catch one started while the first pass ran. A thread
// already at Nice or lower priority is left as it is.
func yield() {
	for range 2 {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return
		}
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			// The system call gives 20 - nice, so that it is never negative.
			if prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid); err == nil && 20-prio < Nice {
				syscall.Setpriority(syscall.PRIO_PROCESS, tid, Nice)
			}
		}
	}
}
