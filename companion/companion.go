// Package companion finds and runs the helper programs that do the work agmem keeps
// out of its own binary, so that agmem record starts fast: agmem-llm (openai-go) and
// agmem-sync (go-git's transports). Each is installed beside agmem and speaks JSON.
package companion

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Find returns the program name to run: configured (a path, or a name looked up on
// $PATH) when it is not "", else the one beside the running agmem, else the first on
// $PATH. setting says where configured comes from, for the error; notFound is the
// error the caller's users test for, wrapped in what Find returns.
func Find(name, configured, setting string, notFound error) (string, error) {
	if configured != "" {
		path, err := exec.LookPath(configured)
		if err != nil {
			return "", fmt.Errorf("%w: %s (%s): %v", notFound, configured, setting, err)
		}
		return path, nil
	}
	if self, err := os.Executable(); err == nil {
		if path, err := exec.LookPath(filepath.Join(filepath.Dir(self), name)); err == nil {
			return path, nil
		}
	}
	if path, err := exec.LookPath(name); err == nil {
		return path, nil
	}
	return "", fmt.Errorf("%w beside agmem nor on $PATH", notFound)
}
