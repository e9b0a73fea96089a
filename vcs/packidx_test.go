package vcs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// Every object git's own index names is found at git's offset, with git's CRC, in an
// index whose offsets git put in the 8-byte table (index-pack's 2,<offset> option puts
// every offset past 256 there); an object the pack lacks is not found; a cut index and
// a version 1 index (which go-git cannot read either) are refused.
func TestPackIdxReadsWhatGitWrote(t *testing.T) {
	r, dir := newRepo(t)
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("current/episodic/2026-01-%02d/%d.md", i%28+1, i)] = strings.Repeat(fmt.Sprintf("line %d\n", i), i%40+1)
	}
	commitFiles(t, r, files, "m\n")
	runGit(t, dir, "repack", "-a", "-d", "-q")
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	if len(packs) != 1 {
		t.Fatalf("%d packs", len(packs))
	}
	wide := filepath.Join(t.TempDir(), "wide.idx")
	runGit(t, dir, "index-pack", "--index-version=2,256", "-o", wide, packs[0])

	for _, idxPath := range []string{strings.TrimSuffix(packs[0], ".pack") + ".idx", wide} {
		idx, err := readPackIdx(idxPath)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(idxPath)
		want := nonEmptyLines(runGitStdin(t, dir, string(data), "show-index"))
		entries, err := idx.entries()
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != len(want) || len(want) < 300 {
			t.Fatalf("%s: %d entries, git shows %d", idxPath, len(entries), len(want))
		}
		for _, line := range want { // "offset id (crc)"
			f := strings.Fields(line)
			at, _ := strconv.ParseInt(f[0], 10, 64)
			got, err := idx.FindOffset(plumbing.NewHash(f[1]))
			if err != nil || got != at {
				t.Fatalf("%s: %s at %d, %v; git says %d", idxPath, f[1], got, err, at)
			}
		}
		for _, e := range entries {
			if !strings.Contains(strings.Join(want, "\n"), fmt.Sprintf("%d %s (%08x)", e.Offset, e.Hash, e.CRC32)) {
				t.Fatalf("%s: entry %d %s %08x is not git's", idxPath, e.Offset, e.Hash, e.CRC32)
			}
		}
		if _, err := idx.FindOffset(plumbing.ComputeHash(plumbing.BlobObject, []byte("in no pack"))); !errors.Is(err, plumbing.ErrObjectNotFound) {
			t.Errorf("an object in no pack: %v", err)
		}
	}

	cut := filepath.Join(t.TempDir(), "cut.idx")
	data, _ := os.ReadFile(wide)
	os.WriteFile(cut, data[:len(data)/2], 0o644)
	if _, err := readPackIdx(cut); err == nil || !strings.Contains(err.Error(), "cut short") {
		t.Errorf("an index cut in half: %v", err)
	}
	v1 := filepath.Join(t.TempDir(), "v1.idx")
	runGit(t, dir, "index-pack", "--index-version=1", "-o", v1, packs[0])
	if _, err := readPackIdx(v1); !errors.Is(err, errIdxVersion) {
		t.Errorf("a version 1 index: %v", err)
	}
}
