//go:build linux

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// insideNamespace names, in the environment of the test binary run again inside the
// network namespace, the test that run is for.
const insideNamespace = "AGMEM_E2E_IN_NAMESPACE"

// isolate reports whether the calling test is inside a network namespace whose only
// interface is loopback, where it may run an agent. Outside one, it runs the test again
// inside a new one (unshare -n, and -m: a mount namespace of its own for the sysfs it
// reads the interfaces in), reports that run's outcome and returns false.
func isolate(t *testing.T) bool {
	if os.Getenv(insideNamespace) == t.Name() {
		enterLoopbackOnly(t)
		return true
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		skipOrFail(t, "unshare (util-linux) is not installed: no network namespace for the agent")
	}
	probe, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(probe, unshare, "-n", "-m", "--", "true").CombinedOutput(); err != nil {
		skipOrFail(t, fmt.Sprintf("cannot make a network namespace (unshare -n needs root or user namespaces): %v: %s", err, bytes.TrimSpace(out)))
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	args := []string{"-n", "-m", "--", self, "-test.run", "^" + t.Name() + "$", "-test.count=1", "-test.v"}
	cmd := exec.CommandContext(ctx, unshare, args...)
	cmd.Env = append(os.Environ(), insideNamespace+"="+t.Name())
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Errorf("in its network namespace (%v):\n%s", err, out)
		return false
	}
	t.Logf("in its network namespace:\n%s", out)
	return false
}

// enterLoopbackOnly refuses to go on unless loopback is the only network interface, so
// that no agent can reach the network: as netlink tells, and as /sys/class/net does in a
// sysfs mounted here (the /sys this process inherited shows the host's interfaces; the
// namespace's own sysfs is mounted on a scratch directory, in the mount namespace unshare
// made, and unmounted once read). Then it brings loopback up.
func enterLoopbackOnly(t *testing.T) {
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	var linked []string
	for _, i := range ifaces {
		linked = append(linked, i.Name)
	}
	if !slices.Equal(linked, []string{"lo"}) {
		t.Fatalf("refusing to run an agent with network interfaces other than loopback: netlink lists %v", linked)
	}
	sys := t.TempDir()
	if err := unix.Mount("sysfs", sys, "sysfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC|unix.MS_RDONLY, ""); err != nil {
		t.Fatalf("mount this namespace's sysfs: %v", err)
	}
	entries, err := os.ReadDir(filepath.Join(sys, "class", "net"))
	if err := unix.Unmount(sys, unix.MNT_DETACH); err != nil {
		t.Fatalf("unmount this namespace's sysfs: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"lo"}) {
		t.Fatalf("refusing to run an agent with network interfaces other than loopback: /sys/class/net has %v", names)
	}
	if err := loopbackUp(); err != nil {
		t.Fatalf("bring loopback up: %v", err)
	}
	// The agents' hooks and MCP servers may outlive the agent: as a subreaper this
	// process becomes their parent, and can wait for the last of them to end.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatalf("become a subreaper: %v", err)
	}
}

func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// ownProcessGroup makes cmd the leader of a process group that its cancellation kills
// whole: an agent's shells, hooks and MCP servers with it.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// waitForOrphans waits until every process this one adopted as their subreaper (an
// agent's async hooks, its MCP servers) has ended, reaping them; past the deadline it
// kills those left and says which they were.
func waitForOrphans(deadline time.Duration) error {
	end := time.Now().Add(deadline)
	for {
		for {
			pid, err := unix.Wait4(-1, nil, unix.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
		left := children()
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(end) {
			var what []string
			for _, pid := range left {
				cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
				what = append(what, fmt.Sprintf("%d %q", pid, strings.ReplaceAll(string(cmdline), "\x00", " ")))
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			return errors.New("still running after the agent ended, killed: " + strings.Join(what, "; "))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// children lists the processes whose parent is this one.
func children() []int {
	entries, _ := os.ReadDir("/proc")
	self := strconv.Itoa(os.Getpid())
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The fields after the command's name, which is in parentheses and may hold any byte.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) > 1 && fields[1] == self {
			pids = append(pids, pid)
		}
	}
	return pids
}
