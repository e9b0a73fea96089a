//go:build unix

package mcp

import (
	"os"
	"syscall"
)

// ownGroup puts the server in a process group of its own: a signal the proxy forwards
// reaches the server and the processes it started (npx starts node, which starts the
// server), and a Ctrl-C at a terminal reaches the server once, through the proxy.
func ownGroup() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// signalServer sends sig to the server's process group.
func signalServer(p *os.Process, sig os.Signal) {
	s, ok := sig.(syscall.Signal)
	if !ok || syscall.Kill(-p.Pid, s) != nil {
		p.Signal(sig)
	}
}

func terminate(p *os.Process) { signalServer(p, syscall.SIGTERM) }

// ExitCode is a process's exit code, or 128+N when signal N ended it, as a shell says.
func ExitCode(s *os.ProcessState) int {
	if ws, ok := s.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return s.ExitCode()
}
