package kept

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// RefsOf fingerprints the refs of the git directory gitDir that the index reads
// branches from: HEAD, the packed refs, and every loose ref under refs/heads and
// refs/remotes (this repo's branch, and the agents/* branches that agmem pull fetched),
// as the files hold them. Refs that move change it; a repack that moves none may too,
// which only sends a context to the index. It reads files only: agmem-record links no
// git code.
func RefsOf(gitDir string) (string, error) {
	h := sha256.New()
	file := func(name string) error {
		data, err := os.ReadFile(filepath.Join(gitDir, name))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		fmt.Fprintf(h, "%q %d\n", name, len(data))
		h.Write(data)
		return err
	}
	if err := file("HEAD"); err != nil {
		return "", err
	}
	if err := file("packed-refs"); err != nil {
		return "", err
	}
	for _, dir := range []string{"refs/heads", "refs/remotes"} {
		err := filepath.WalkDir(filepath.Join(gitDir, dir), func(p string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil || d.IsDir() {
				return err
			}
			rel, err := filepath.Rel(gitDir, p)
			if err != nil {
				return err
			}
			return file(rel)
		})
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
