package vcs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// A shared index keeps where one entry in sampleEvery starts: every position, name and
// raw entry it gives is the one a scan of the whole file finds, and find gives the
// first position at or past a name, for names it holds and names between them, across
// the kept offsets, with names of every length (one long enough to end at its NUL).
func TestSharedIndexFindsEveryEntry(t *testing.T) {
	fi, err := os.Stat(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := range 5*sampleEvery + 3 {
		names = append(names, fmt.Sprintf("current/semantic/%04d-%s.md", i, strings.Repeat("x", i%23)))
	}
	names[sampleEvery+7] = "current/semantic/" + fmt.Sprintf("%04d", sampleEvery+7) + strings.Repeat("l", flagNameMask+10)
	w := newIndexWriter(2, 0)
	for _, n := range names {
		w.add(newIndexEntry(n, plumbing.ZeroHash, fi))
	}
	data := w.finish(nil)
	h := plumbing.Hash(data[len(data)-len(plumbing.ZeroHash):])
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sharedindex."+h.String()), data, 0o444); err != nil {
		t.Fatal(err)
	}
	s, err := readShared(dir, h)
	if err != nil {
		t.Fatal(err)
	}
	defer s.unmap()
	var whole [][]byte
	if _, err := scanEntries(data, len(names), func(at, _, _, size int) { whole = append(whole, data[at:at+size]) }); err != nil {
		t.Fatal(err)
	}
	if s.len() != len(names) {
		t.Fatalf("%d entries, want %d", s.len(), len(names))
	}
	for i, n := range names {
		if got := string(s.raw(i)); got != string(whole[i]) {
			t.Errorf("entry %d: raw differs from the scan's", i)
		}
		if got := string(s.name(i)); got != n {
			t.Errorf("entry %d: name %.40q, want %.40q", i, got, n)
		}
		if p, ok := s.find(n); p != i || !ok {
			t.Errorf("find(%.40q) = %d, %v; want %d, true", n, p, ok, i)
		}
		if p, ok := s.find(n + "\x00"); p != i+1 || ok { // just past it
			t.Errorf("find past %.40q = %d, %v; want %d, false", n, p, ok, i+1)
		}
	}
	if p, ok := s.find(""); p != 0 || ok {
		t.Errorf("find before all = %d, %v", p, ok)
	}
	if p, ok := s.find("~"); p != len(names) || ok {
		t.Errorf("find past all = %d, %v", p, ok)
	}
}
