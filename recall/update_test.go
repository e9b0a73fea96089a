package recall

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/agmem/agmem/render"
	"github.com/agmem/agmem/vcs"
)

// commitBatch commits files on ref (the branch, for "") as a flush's commit of batch.
func commitBatch(tb testing.TB, repo *vcs.Git, ref plumbing.ReferenceName, batch string, files map[string]string) {
	tb.Helper()
	commitWith(tb, repo, ref, "a flush\n\n"+vcs.TrailerBatch+": "+batch+"\n", files)
}

// brokenRecord is a record of n observations of session s, then a line that is not one:
// what the update reads in parts (readPart) before it comes to that line.
func brokenRecord(tb testing.TB, s string, n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(line(tb, observation(s, i, fmt.Sprint("the kestrel's call, part ", i))))
	}
	return b.String() + `{"observation":{"id":5}}` + "\n"
}

// TestBrokenRecordIndexedWhole: a record the update reads in parts and finds broken past
// its first parts is an error, and the update adds nothing, when it is this repo's; a
// fetched branch's is passed over whole, and the update adds that branch's other records.
func TestBrokenRecordIndexedWhole(t *testing.T) {
	n := 2*readPart + 10
	count := func(ix *Index) (entries int) {
		if err := ix.db.QueryRow(`SELECT count(*) FROM entries`).Scan(&entries); err != nil {
			t.Fatal(err)
		}
		return entries
	}

	t.Run("this repo's", func(t *testing.T) {
		repo, _, err := vcs.Init(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		commitBatch(t, repo, "", "b0", map[string]string{
			render.CurrentLayout.SessionRecordPath("s1", "b0"): brokenRecord(t, "s1", n),
		})
		ix, err := OpenIndex(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		if _, err := ix.Update(context.Background(), repo, nil); err == nil || !strings.Contains(err.Error(), fmt.Sprint("line ", n+1)) {
			t.Fatalf("the update of a broken record: %v", err)
		}
		if got := count(ix); got != 0 {
			t.Errorf("the failed update left %d entries", got)
		}
	})

	t.Run("fetched", func(t *testing.T) {
		repo := commitBatches(t, "s0", nil)
		theirs := observation("s2", 1, "the kestrel's other call, in a record that reads")
		commitBatch(t, repo, "refs/remotes/origin/agents/other", "b1", map[string]string{
			render.CurrentLayout.SessionRecordPath("s1", "b1"): brokenRecord(t, "s1", n),
			render.CurrentLayout.SessionRecordPath("s2", "b1"): line(t, theirs),
		})
		ix, err := OpenIndex(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		if _, err := ix.Update(context.Background(), repo, nil); err != nil {
			t.Fatal(err)
		}
		if got := count(ix); got != 1 {
			t.Errorf("%d entries, want the one of the record that reads", got)
		}
	})
}
