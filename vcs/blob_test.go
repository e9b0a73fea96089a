package vcs

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// OpenFile reads a file as git has it however git stores it: whole in a pack (as agmem
// writes it), loose (as git commit writes it), as a delta in a pack (after git gc).
func TestOpenFileAgreesWithGit(t *testing.T) {
	r, dir := newRepo(t)
	big := strings.Repeat("a line of a session record, long enough to be worth a delta\n", 20000)
	files := map[string]string{
		"sessions/s1/b1.jsonl": big,
		"sessions/s1/b2.jsonl": big + "one line more\n",
		"sessions/s1/empty":    "",
	}
	d, _ := commitFiles(t, r, files, "m\n")
	if err := r.Materialize(d.Changes()); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		h := revParse(t, dir, "HEAD")
		assertOpenFiles(t, r, h, files, when)
		for _, missing := range []string{"sessions/s1/nope", "nope/b1.jsonl", "sessions/s1"} {
			if _, err := r.OpenFile(h, missing); !errors.Is(err, object.ErrFileNotFound) {
				t.Errorf("%s: OpenFile(%s) = %v, want ErrFileNotFound", when, missing, err)
			}
		}
	}
	check("packed by agmem")

	files["sessions/s1/loose"] = "written by git\n"
	writeWorktree(t, dir, map[string]string{"sessions/s1/loose": files["sessions/s1/loose"]})
	runGit(t, dir, "add", "sessions/s1/loose")
	runGit(t, dir, "commit", "-q", "-m", "by git")
	check("a loose object")

	if _, err := r.PackObjects(); err != nil {
		t.Fatal(err)
	}
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	if len(packs) != 1 {
		t.Fatalf("after git gc: %d packs", len(packs))
	}
	if out := runGit(t, dir, "verify-pack", "-v", packs[0]); !strings.Contains(out, "chain length = 1") {
		t.Fatalf("git gc stored no delta:\n%s", out)
	}
	check("after git gc, deltas")
	h := revParse(t, dir, "HEAD")
	os.Remove(packs[0]) // the index read says it is there
	// Read through the pack's file this Git holds open (as every read of a pack after
	// its first does), the blob is what it was; through one that never opened it, an
	// error: never other data.
	if rd, err := r.OpenFile(h, "sessions/s1/b1.jsonl"); err == nil {
		data, err := io.ReadAll(rd)
		rd.Close()
		if err == nil && string(data) != files["sessions/s1/b1.jsonl"] {
			t.Errorf("OpenFile of a blob whose pack is gone, held open: %q", data)
		}
	}
	fresh, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rd, err := fresh.OpenFile(h, "sessions/s1/b1.jsonl"); err == nil {
		rd.Close()
		t.Errorf("OpenFile of a blob whose pack is gone: no error")
	}
}

// A blob whose pack entry is cut short is an error, never short data.
func TestOpenFileCutShortPack(t *testing.T) {
	r, dir := newRepo(t)
	var text strings.Builder
	rng := rand.New(rand.NewPCG(1, 2))
	for text.Len() < 200000 { // text that compresses little, so its entry is long
		fmt.Fprintf(&text, "line %d %x\n", text.Len(), rng.Uint64())
	}
	d, _ := commitFiles(t, r, map[string]string{"sessions/s1/b1.jsonl": text.String()}, "m\n")
	if err := r.Materialize(d.Changes()); err != nil {
		t.Fatal(err)
	}
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	if len(packs) != 1 {
		t.Fatalf("%d packs", len(packs))
	}
	idx, err := readPackIdx(strings.TrimSuffix(packs[0], ".pack") + ".idx")
	if err != nil {
		t.Fatal(err)
	}
	at, err := idx.FindOffset(plumbing.ComputeHash(plumbing.BlobObject, []byte(text.String())))
	if err != nil {
		t.Fatal(err)
	}
	head := revParse(t, dir, "HEAD")
	if rd, err := r.OpenFile(head, "sessions/s1/b1.jsonl"); err == nil {
		rd.Close() // the trees are read, and kept: the pack may hold them after the blob
	}
	if err := os.Truncate(packs[0], at+20000); err != nil {
		t.Fatal(err)
	}
	rd, err := r.OpenFile(head, "sessions/s1/b1.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if got, err := io.ReadAll(rd); err == nil {
		t.Fatalf("read %d of %d bytes, and no error: the cut reads as the end", len(got), text.Len())
	}
}

// A loose object that is not a blob, or a loose blob cut short, is an error, never data.
func TestOpenLooseDamaged(t *testing.T) {
	r, dir := newRepo(t)
	var text strings.Builder
	rng := rand.New(rand.NewPCG(3, 4))
	for text.Len() < 200000 {
		fmt.Fprintf(&text, "line %d %x\n", text.Len(), rng.Uint64())
	}
	writeWorktree(t, dir, map[string]string{"sessions/s1/loose": text.String()})
	runGit(t, dir, "add", "sessions/s1/loose")
	runGit(t, dir, "commit", "-q", "-m", "by git")
	head := revParse(t, dir, "HEAD")
	if rd, err := r.OpenBlob(head); err == nil {
		rd.Close()
		t.Errorf("OpenBlob of a commit: no error")
	}
	blob := plumbing.ComputeHash(plumbing.BlobObject, []byte(text.String()))
	file := filepath.Join(dir, ".git", "objects", blob.String()[:2], blob.String()[2:])
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(file, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	rd, err := r.OpenBlob(blob)
	if err != nil {
		return
	}
	defer rd.Close()
	if got, err := io.ReadAll(rd); err == nil {
		t.Fatalf("read %d of %d bytes, and no error: the cut reads as the end", len(got), text.Len())
	}
}

// A loose blob whose header's size is not its content's, too small, too large or past
// any buffer, is an error when read whole, never a panic or short data.
func TestReadBlobHeaderLies(t *testing.T) {
	r, dir := newRepo(t)
	for i, object := range []string{"blob 3\x00abcdef", "blob 100\x00abc", "blob 9223372036854775807\x00abc", "blob -5\x00abc"} {
		h := plumbing.ComputeHash(plumbing.BlobObject, []byte(fmt.Sprint("no such content ", i)))
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		zw.Write([]byte(object))
		zw.Close()
		file := filepath.Join(dir, ".git", "objects", h.String()[:2], h.String()[2:])
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, z.Bytes(), 0o444); err != nil {
			t.Fatal(err)
		}
		if data, err := r.ReadBlob(h); err == nil {
			t.Errorf("%q: read as %q, no error", object, data)
		}
	}
}

// Deltas of deltas, as git gc writes them, against a base by offset
// (git's default) or by id: every blob reads as git has it, read once (the chain
// resolved) and again (its links kept).
func TestOpenFileResolvesDeltaChains(t *testing.T) {
	for _, byOffset := range []string{"true", "false"} {
		t.Run("offsets="+byOffset, func(t *testing.T) {
			r, dir := newRepo(t)
			files := map[string]string{}
			var text strings.Builder
			for i := range 60 {
				fmt.Fprintf(&text, "{\"line\":%d,\"text\":%q}\n", i, strings.Repeat("a result of a call ", 40))
				files[fmt.Sprintf("sessions/s%02d/b.jsonl", i)] = text.String()
			}
			writeWorktree(t, dir, files)
			runGit(t, dir, "add", "-A")
			runGit(t, dir, "commit", "-q", "-m", "sessions")
			runGit(t, dir, "-c", "repack.useDeltaBaseOffset="+byOffset, "repack", "-q", "-a", "-d", "-f", "--depth=50", "--window=100")
			packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
			if len(packs) != 1 {
				t.Fatalf("%d packs", len(packs))
			}
			if out := runGit(t, dir, "verify-pack", "-v", packs[0]); !strings.Contains(out, "chain length = 2:") {
				t.Fatalf("no delta of a delta:\n%s", out)
			}
			r.reindex()
			h := revParse(t, dir, "HEAD")
			assertOpenFiles(t, r, h, files, "resolved")
			assertOpenFiles(t, r, h, files, "read again")
		})
	}
}

// assertOpenFiles checks that OpenFile reads each of files at commit h as it is.
func assertOpenFiles(t *testing.T, r *Git, h plumbing.Hash, files map[string]string, when string) {
	t.Helper()
	for path, want := range files {
		rd, err := r.OpenFile(h, path)
		if err != nil {
			t.Fatalf("%s: OpenFile(%s): %v", when, path, err)
		}
		got, err := io.ReadAll(rd)
		rd.Close()
		if err != nil || string(got) != want {
			t.Errorf("%s: OpenFile(%s) read %d bytes, %v; want %d", when, path, len(got), err, len(want))
		}
	}
}

// PackedWithPrefix names an object by the start of its id exactly when the packs hold
// one object of that start: checked against every id git lists, at every prefix length
// the index or a person could give, over two packs that hold some objects both.
func TestPackedWithPrefix(t *testing.T) {
	r, dir := newRepo(t)
	files := map[string]string{}
	for i := range 400 {
		files[fmt.Sprintf("sessions/s%d/f.md", i%7)+fmt.Sprint(i)] = fmt.Sprintf("file %d\n", i)
	}
	commitFiles(t, r, files, "one\n")
	files["sessions/s1/more.md"] = "one file more\n"
	commitFiles(t, r, files, "two\n") // its pack holds the trees it changed, and the new file
	var ids []plumbing.Hash
	for l := range strings.Lines(runGit(t, dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")) {
		ids = append(ids, plumbing.NewHash(strings.TrimSpace(l)))
	}
	if loose := runGit(t, dir, "count-objects"); !strings.HasPrefix(loose, "0 objects") {
		t.Fatalf("loose objects: %s", loose)
	}
	check := func() {
		t.Helper()
		for _, n := range []int{1, 2, 8, 20} {
			checkPrefixes(t, r, ids, n)
		}
	}
	check()
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*"))
	for _, p := range packs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(strings.Replace(p, "pack-", "pack-copy", 1), b, 0o444); err != nil {
			t.Fatal(err)
		}
	}
	r.packs.forget()
	check() // each object twice, in packs of their own
	if _, ok, _ := r.PackedWithPrefix([]byte{0xde, 0xad, 0xbe, 0xef, 0xde, 0xad, 0xbe, 0xef}); ok {
		t.Errorf("a start no object has names one")
	}
}

func checkPrefixes(t *testing.T, r *Git, ids []plumbing.Hash, n int) {
	t.Helper()
	for _, id := range ids {
		var of []plumbing.Hash
		for _, other := range ids {
			if string(other[:n]) == string(id[:n]) {
				of = append(of, other)
			}
		}
		h, ok, err := r.PackedWithPrefix(id[:n])
		if err != nil {
			t.Fatal(err)
		}
		if ok != (len(of) == 1) || ok && h != id {
			t.Fatalf("PackedWithPrefix(%x) = %s, %v; objects of that start: %v", id[:n], h, ok, of)
		}
	}
}

// TestIsAncestor: through every parent, as a branch merged on another machine is still
// held by its merge.
func TestIsAncestor(t *testing.T) {
	r, dir := newRepo(t)
	commit := func(name string) plumbing.Hash {
		t.Helper()
		writeWorktree(t, dir, map[string]string{name: name + "\n"})
		runGit(t, dir, "add", name)
		runGit(t, dir, "commit", "-q", "-m", name)
		return revParse(t, dir, "HEAD")
	}
	a := commit("a")
	runGit(t, dir, "checkout", "-q", "-b", "side")
	b := commit("b")
	runGit(t, dir, "checkout", "-q", "-")
	c := commit("c")
	runGit(t, dir, "merge", "-q", "--no-ff", "-m", "merge", "side")
	m := revParse(t, dir, "HEAD")
	for _, tc := range []struct {
		x, y plumbing.Hash
		want bool
	}{{a, m, true}, {b, m, true}, {c, m, true}, {m, m, true}, {m, b, false}, {b, c, false}, {c, b, false}} {
		if got, err := r.IsAncestor(tc.x, tc.y); err != nil || got != tc.want {
			t.Errorf("IsAncestor(%s, %s) = %v, %v; want %v", tc.x, tc.y, got, err, tc.want)
		}
	}
	// StepsBack goes by first parents only, within its limit: the merged side is off it.
	for _, tc := range []struct {
		to    plumbing.Hash
		limit int
		n     int
		ok    bool
	}{{m, 5, 0, true}, {c, 5, 1, true}, {a, 5, 2, true}, {a, 1, 0, false}, {b, 5, 0, false}} {
		if n, ok := r.StepsBack(m, tc.to, tc.limit); n != tc.n || ok != tc.ok {
			t.Errorf("StepsBack(merge, %s, %d) = %d, %v; want %d, %v", tc.to, tc.limit, n, ok, tc.n, tc.ok)
		}
	}
}
