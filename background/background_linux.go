package background

import (
	"os"
	"strconv"
	"syscall"
)

// yield sets every thread's priority: on Linux a nice value belongs to a thread, and a
// new thread takes its creator's. The Go runtime has started several threads by now;
// the list is read twice to catch one started while the first pass ran.
func yield() {
	for range 2 {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return
		}
		for _, t := range tasks {
			if tid, err := strconv.Atoi(t.Name()); err == nil {
				syscall.Setpriority(syscall.PRIO_PROCESS, tid, Nice)
			}
		}
	}
}
