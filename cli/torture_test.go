package cli_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var tortureFor = flag.Duration("torture", time.Minute, "how long TestTorture runs (scripts/torture.sh sets minutes)")

// processes are the agmem processes running now, for the killer to pick from.
type processes struct {
	mu   sync.Mutex
	live map[*os.Process]bool
}

func (p *processes) run(cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	p.mu.Lock()
	p.live[cmd.Process] = true
	p.mu.Unlock()
	err := cmd.Wait()
	p.mu.Lock()
	delete(p.live, cmd.Process)
	p.mu.Unlock()
	return err
}

func (p *processes) killOne(r *rand.Rand) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	var all []*os.Process
	for proc := range p.live {
		all = append(all, proc)
	}
	if len(all) == 0 {
		return false
	}
	return all[r.Intn(len(all))].Signal(syscall.SIGKILL) == nil
}

func killed(err error) bool {
	var exit *exec.ExitError
	return errors.As(err, &exit) && exit.ProcessState.Sys().(syscall.WaitStatus).Signaled()
}

// TestTorture runs record processes (agmem record, and agmem-record, which hooks run)
// and flush loops at once while a killer sends SIGKILL to random agmem processes at
// random moments. Then one last flush, and the check: every id a record printed before
// exiting 0 is in exactly one markdown file and one session record, the trailers add up,
// nothing is pending, and git finds the repo whole and clean.
func TestTorture(t *testing.T) {
	dir := t.TempDir()
	mustAgmem(t, dir, "", "init", ".")
	procs := &processes{live: map[*os.Process]bool{}}
	deadline := time.Now().Add(*tortureFor)

	var mu sync.Mutex
	var acknowledged []string
	var failures []string
	fail := func(what string, err error, stderr string) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, fmt.Sprintf("%s: %v: %s", what, err, strings.TrimSpace(stderr)))
	}
	command := func(stdin, name string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = gitEnv(dir)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		return cmd, &out, &errb
	}

	var wg sync.WaitGroup
	const recorders, flushers = 4, 2
	for w := 0; w < recorders; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			r := rand.New(rand.NewSource(int64(w)))
			for n := 0; time.Now().Before(deadline); n++ {
				var in strings.Builder
				for i := 0; i < 1+r.Intn(4); i++ {
					fmt.Fprintf(&in, `{"tool_name":"read_file","tool_use_id":"w%d-%d-%d","arguments":{"path":"f%d"},"result":"%s","session_id":"s%d"}`+"\n",
						w, n, i, n, strings.Repeat("r", 60), r.Intn(3))
				}
				// half the recorders are agmem-record, what hooks run
				cmd, out, errb := command(in.String(), "agmem", "record", "--jsonl")
				if w%2 == 1 {
					cmd, out, errb = command(in.String(), "agmem-record", "--jsonl")
				}
				err := procs.run(cmd)
				switch {
				case err == nil:
					mu.Lock()
					acknowledged = append(acknowledged, lines(out.String())...)
					mu.Unlock()
				case !killed(err):
					fail("record", err, errb.String())
				}
			}
		}(w)
	}
	for f := 0; f < flushers; f++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				cmd, _, errb := command("", "agmem", "flush")
				if err := procs.run(cmd); err != nil && !killed(err) {
					fail("flush", err, errb.String())
				}
			}
		}()
	}
	kills := 0
	r := rand.New(rand.NewSource(time.Now().UnixNano()))
	for time.Now().Before(deadline) {
		time.Sleep(time.Duration(5+r.Intn(60)) * time.Millisecond)
		if procs.killOne(r) {
			kills++
		}
	}
	wg.Wait()
	mustAgmem(t, dir, "", "flush")

	inMarkdown, inRecords, total := committed(t, dir)
	lost, duplicated := 0, 0
	for _, id := range acknowledged {
		switch {
		case inMarkdown[id] == 0 || inRecords[id] == 0:
			lost++
		case inMarkdown[id] > 1 || inRecords[id] > 1:
			duplicated++
		}
	}
	for id, n := range inMarkdown {
		if n > 1 || inRecords[id] > 1 {
			duplicated++
		}
	}
	t.Logf("torture for %s: acknowledged %d, committed %d, lost %d, duplicated %d, kills %d",
		*tortureFor, len(acknowledged), len(inMarkdown), lost, duplicated, kills)
	if lost > 0 || duplicated > 0 {
		t.Errorf("lost %d, duplicated %d", lost, duplicated)
	}
	if total != len(inMarkdown) || len(inRecords) != len(inMarkdown) {
		t.Errorf("trailers add up to %d, %d markdown files, %d record lines: they must agree", total, len(inMarkdown), len(inRecords))
	}
	if len(failures) > 0 {
		t.Errorf("%d agmem processes failed without being killed, e.g. %s", len(failures), failures[0])
	}
	if kills == 0 || len(acknowledged) == 0 {
		t.Errorf("the run proved nothing: %d kills, %d acknowledged", kills, len(acknowledged))
	}
	checkRepoSettled(t, dir)
}
