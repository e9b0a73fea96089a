package daemon

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/agmem/agmem/internal/flock"
	"github.com/agmem/agmem/internal/memrepo"
)

// readyTimeout bounds how long Start waits for the daemon it started to hold its lock.
const readyTimeout = 15 * time.Second

// readyFD is the descriptor on which a daemon that Start spawned says how its start
// went, in one JSON line: its pid, or why it could not start.
const readyFD = 3

type readyLine struct {
	PID   int    `json:"pid,omitempty"`
	Error string `json:"error,omitempty"`
	Hint  string `json:"hint,omitempty"`
}

// StartError is why a daemon that Start spawned did not start, as it said so.
type StartError struct{ Msg, Hint string }

func (e *StartError) Error() string { return e.Msg }

// Start runs exe with args (an `agmem daemon run` that passes the notice to Notifier)
// as a process of its own session, its output appended to the daemon's log, and returns
// its pid once it holds its lock; or why it could not start.
func Start(repo memrepo.Repo, exe string, args []string) (int, error) {
	logf, err := os.OpenFile(LogPath(repo.StateDir()), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return 0, fmt.Errorf("open the daemon's log: %w", err)
	}
	defer logf.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	defer r.Close()
	cmd := exec.Command(exe, args...)
	cmd.Dir = repo.Root
	cmd.Stdout, cmd.Stderr = logf, logf // what Go itself prints if the daemon crashes
	cmd.ExtraFiles = []*os.File{w}      // readyFD
	cmd.SysProcAttr = detached()
	err = cmd.Start()
	w.Close()
	if err != nil {
		return 0, fmt.Errorf("start the daemon: %w", err)
	}
	r.SetReadDeadline(time.Now().Add(readyTimeout))
	text, err := bufio.NewReader(r).ReadBytes('\n')
	var said readyLine
	switch {
	case err == nil && json.Unmarshal(text, &said) == nil && said.PID > 0:
		cmd.Process.Release()
		return said.PID, nil
	case said.Error != "":
		cmd.Wait()
		return 0, &StartError{Msg: said.Error, Hint: said.Hint}
	case errors.Is(err, os.ErrDeadlineExceeded):
		cmd.Process.Kill()
		cmd.Wait()
		return 0, &StartError{Msg: fmt.Sprintf("the daemon was not ready within %s; it was stopped", readyTimeout),
			Hint: "see " + LogPath(repo.StateDir())}
	}
	cmd.Wait()
	return 0, &StartError{Msg: "the daemon exited as it started", Hint: "see " + LogPath(repo.StateDir())}
}

// Notifier tells the Start that spawned this process how its start went; it is nil in
// a daemon that Start did not spawn.
type Notifier struct{ f *os.File }

// Spawned returns the Notifier of a daemon that Start spawned.
func Spawned() *Notifier { return &Notifier{os.NewFile(readyFD, "ready")} }

// Ready says the daemon holds its lock.
func (n *Notifier) Ready(pid int) { n.say(readyLine{PID: pid}) }

// Failed says why the daemon could not start.
func (n *Notifier) Failed(msg, hint string) { n.say(readyLine{Error: msg, Hint: hint}) }

func (n *Notifier) say(l readyLine) {
	if n == nil || n.f == nil {
		return
	}
	data, _ := json.Marshal(l)
	n.f.Write(append(data, '\n'))
	n.f.Close()
	n.f = nil
}

// Stop asks the daemon of repo to stop (SIGTERM) and waits at most timeout for it to
// read its files and flush a last time. It returns the state it stopped in.
func Stop(repo memrepo.Repo, timeout time.Duration) (*State, error) {
	st, err := Probe(repo)
	if err != nil {
		return nil, err
	}
	if st.PID <= 0 {
		return nil, errors.New("agmem daemon is running, but its state file names no pid")
	}
	proc, err := os.FindProcess(st.PID)
	if err == nil {
		err = proc.Signal(syscall.SIGTERM)
	}
	if err != nil {
		return nil, fmt.Errorf("stop agmem daemon (pid %d): %w", st.PID, err)
	}
	lock, err := flock.Acquire(filepath.Join(repo.StateDir(), lockName), timeout)
	if errors.Is(err, flock.ErrTimeout) {
		return nil, fmt.Errorf("agmem daemon (pid %d) did not stop within %s", st.PID, timeout)
	}
	if err != nil {
		return nil, err
	}
	lock.Release()
	if final, err := readState(repo.StateDir()); err == nil && final.PID == st.PID {
		return final, nil
	}
	return st, nil
}
