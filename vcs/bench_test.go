package vcs

import (
	"fmt"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// benchRepo is a repo whose branch holds 10,000 small files in 10 day directories, as a
// memory repo does after a while.
func benchRepo(b *testing.B) (*Git, plumbing.ReferenceName) {
	b.Helper()
	r, _ := newRepo(b)
	branch := branchOf(b, r)
	d, err := r.NewDraft(plumbing.ZeroHash)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 10000; i++ {
		p := fmt.Sprintf("current/episodic/2026-11-%02d/%05d-Bash.md", 1+i/1000, i)
		if err := d.Put(p, []byte(fmt.Sprintf("observation %d\n", i))); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := d.Commit(branch, "base\n", when(0)); err != nil {
		b.Fatal(err)
	}
	return r, branch
}

// commitBatch commits 1,000 small files at the paths path(batch, i) on the branch tip.
func commitBatch(b *testing.B, r *Git, branch plumbing.ReferenceName, n int, path func(n, i int) string) *Draft {
	tip, err := r.Tip(branch)
	if err != nil {
		b.Fatal(err)
	}
	d, err := r.NewDraft(tip)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 1000; i++ {
		if err := d.Put(path(n, i), []byte(fmt.Sprintf("observation %d of batch %d\n", i, n))); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := d.Commit(branch, fmt.Sprintf("batch %d\n", n), when(n)); err != nil {
		b.Fatal(err)
	}
	return d
}

// One flush's worth of git work: 1,000 new small files committed on a repo that has
// 10,000. Its cost should depend on the 1,000, not on the 10,000.
func BenchmarkCommit1000Files(b *testing.B) {
	r, branch := benchRepo(b)
	for n := 0; b.Loop(); n++ {
		commitBatch(b, r, branch, n, func(n, i int) string {
			return fmt.Sprintf("current/episodic/2026-12-%02d/%04d-Read.md", 1+n%28, i)
		})
	}
}

// The same, and the 1,000 files written into the worktree and the index.
func BenchmarkCommitAndMaterialize1000Files(b *testing.B) {
	r, branch := benchRepo(b)
	for n := 0; b.Loop(); n++ {
		d := commitBatch(b, r, branch, n, func(n, i int) string {
			return fmt.Sprintf("current/semantic/%d/%04d-Read.md", n, i)
		})
		if err := r.Materialize(d.Changes()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEntryOffsets parses a directory of 4,000 observations' files, as a day of a
// year's memory holds.
func BenchmarkEntryOffsets(b *testing.B) {
	var raw []byte
	for i := range 4000 {
		raw = fmt.Appendf(raw, "100644 09-%02d-%02d-Read-%012x.md\x00", i/60%60, i%60, i*7919)
		h := plumbing.ComputeHash(plumbing.BlobObject, raw[len(raw)-20:])
		raw = append(raw, h[:]...)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := entryOffsets(raw); err != nil {
			b.Fatal(err)
		}
	}
}
