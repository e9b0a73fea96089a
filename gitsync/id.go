package gitsync

import (
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// IDFile holds, in a memory repo's state directory, the id the repo publishes its branch
// under on remotes: refs/heads/agents/<id>. It is made by the first push and never
// changes by itself; a person may choose another before the first push.
const IDFile = "repo-id"

// errBadID is returned for an id that cannot name a branch.
var errBadID = errors.New("not a usable repo id")

// readID returns the memory repo's id, or "" if it has none yet.
func readID(stateDir string) (string, error) {
	path := filepath.Join(stateDir, IDFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(data))
	if !validID(id) {
		return "", fmt.Errorf("%s: %q is %w (letters, digits, '.', '_' and '-', starting with a letter or digit)", path, id, errBadID)
	}
	return id, nil
}

// EnsureID returns the memory repo's id, making one if it has none: the host's name,
// the repo directory's name and a random tail, "ana-laptop-agent-memory-7k3qxa", so
// that a person can tell whose branch is whose and two repos never share one.
func EnsureID(stateDir, root string) (string, error) {
	if id, err := readID(stateDir); id != "" || err != nil {
		return id, err
	}
	host, _ := os.Hostname()
	var tail [5]byte
	if _, err := rand.Read(tail[:]); err != nil {
		return "", err
	}
	var parts []string
	for _, p := range []string{idPart(host), idPart(filepath.Base(root))} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	parts = append(parts, strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(tail[:])))
	id := strings.Join(parts, "-")
	// Made under another name and linked into place, so that two processes making one
	// at once agree on the first.
	path := filepath.Join(stateDir, IDFile)
	tmp := fmt.Sprintf("%s.%s.tmp", path, parts[len(parts)-1])
	if err := os.WriteFile(tmp, []byte(id+"\n"), 0o644); err != nil {
		return "", err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	return readID(stateDir)
}

// idPart makes s a piece of an id: lower case letters and digits, other runs as one
// '-', at most 24 bytes.
func idPart(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		} else {
			dash = true
		}
		if b.Len() >= 24 {
			break
		}
	}
	return strings.Trim(b.String(), "-")
}

// validID reports whether id can be one component of a branch name for git and for
// every file system agmem runs on.
func validID(id string) bool {
	if id == "" || len(id) > 100 || strings.Contains(id, "..") || strings.HasSuffix(id, ".lock") || strings.HasSuffix(id, ".") {
		return false
	}
	for i, r := range id {
		alnum := 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
		if !alnum && (i == 0 || r != '.' && r != '_' && r != '-') {
			return false
		}
	}
	return true
}
