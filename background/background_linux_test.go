package background

import (
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// After Yield every thread of the process runs at Nice, those the runtime starts later
// too (they take their creator's).
func TestYieldEveryThread(t *testing.T) {
	Yield()
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 4 { // goroutines that keep their threads make the runtime start new ones
		wg.Add(1)
		go func() {
			runtime.LockOSThread()
			wg.Done()
			<-start
		}()
	}
	wg.Wait()
	defer close(start)
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		stat, err := os.ReadFile("/proc/self/task/" + task.Name() + "/stat")
		if err != nil {
			continue // the thread ended
		}
		// the fields after the command's name, which is in parentheses: nice is the 19th
		// field of the line, the 17th of these
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if fields[16] != "10" {
			t.Errorf("thread %s has nice %s, want 10", task.Name(), fields[16])
		}
	}
}
