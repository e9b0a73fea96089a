package priority

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// After Yield every thread of the process runs at Nice, those the runtime starts later
// too (they take their creator's); a process started at a lower priority keeps it
// (run the test under "nice -n 15" to see that).
func TestYieldEveryThread(t *testing.T) {
	want := max(niceOf(t, "/proc/self/stat"), Nice)
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
		if _, err := os.Stat("/proc/self/task/" + task.Name()); err != nil {
			continue // the thread ended
		}
		if nice := niceOf(t, "/proc/self/task/"+task.Name()+"/stat"); nice != want {
			t.Errorf("thread %s has nice %d, want %d", task.Name(), nice, want)
		}
	}
}

// niceOf reads the nice value in a /proc stat file: the 19th field of its line, the 17th
// after the command's name, which is in parentheses.
func niceOf(t *testing.T, statPath string) int {
	t.Helper()
	stat, err := os.ReadFile(statPath)
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	nice, err := strconv.Atoi(fields[16])
	if err != nil {
		t.Fatal(err)
	}
	return nice
}
