//go:build !unix

package mcp

import (
	"os"
	"syscall"
)

// ownGroup has no process group to make outside unix.
func ownGroup() *syscall.SysProcAttr { return nil }

// signalServer ends the server: outside unix a process cannot be sent a signal.
func signalServer(p *os.Process, _ os.Signal) { p.Kill() }

func terminate(p *os.Process) { p.Kill() }

// ExitCode is a process's exit code.
func ExitCode(s *os.ProcessState) int { return s.ExitCode() }
