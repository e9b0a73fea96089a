package maintain

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agmem/agmem/journal"
	"github.com/agmem/agmem/render"
)

func TestCheckAfterFlushesIsConsistent(t *testing.T) {
	m := newMemRepo(t)
	m.record("s1", 3)
	m.flushed("s2", 2)
	m.flushed("s1", 1)
	m.record("s3", 4)

	r := m.check()
	if !r.Consistent() {
		t.Fatalf("problems after plain flushes: %v", r.Problems)
	}
	if r.Commits != 3 || r.Observations != 6 || r.PendingObservations != 4 || r.Branch != "main" {
		t.Errorf("report = %+v, want 3 commits, 6 observations, 4 pending on main", r)
	}
}

func TestCheckRevertedThenCherryPickedBatch(t *testing.T) {
	m := newMemRepo(t)
	m.flushed("s1", 2)
	m.gitCLI("revert", "--no-edit", "HEAD")

	r := m.check()
	if got, want := kinds(r), []Kind{MissingFromHead, MissingFromHead, MissingFromHead}; !slices.Equal(got, want) {
		t.Fatalf("after git revert: %v, want a record and two markdown files missing from HEAD", r.Problems)
	}
	if !strings.Contains(r.Problems[0].Message+r.Problems[1].Message+r.Problems[2].Message, "the session record of batch") {
		t.Errorf("the record is not named among %v", r.Problems)
	}

	m.gitCLI("cherry-pick", "HEAD~1")
	r = m.check()
	onlyProblem(t, r, Duplicate, "in both commit")
}

func TestCheckTrailerThatLies(t *testing.T) {
	m := newMemRepo(t)
	m.flushed("s1", 2)
	msg := m.gitCLI("log", "-1", "--format=%B")
	m.gitCLI("commit", "--amend", "-q", "-m", strings.Replace(msg, "Agmem-Observations: 2", "Agmem-Observations: 5", 1))

	onlyProblem(t, m.check(), TrailerMismatch, `Agmem-Observations: "5", but its session record holds 2`)
}

func TestRepairRecommitsWhatAResetLost(t *testing.T) {
	m := newMemRepo(t)
	m.flushed("s1", 2)
	lost := m.flushed("s1", 3)
	m.gitCLI("reset", "-q", "--hard", "HEAD~1")

	if p := onlyProblem(t, m.check(), LostCommit, "3 entries of session s1"); !slices.Equal(p.Entries, lost) {
		t.Fatalf("lost entries %v, want %v", p.Entries, lost)
	}

	done, after := m.repair()
	if done.Requeued != 3 || len(done.Commits) != 1 || done.Commits[0].Observations != 3 {
		t.Errorf("repair did %+v, want 3 entries committed again in one commit", done)
	}
	if !after.Consistent() || after.Observations != 5 {
		t.Fatalf("after repair: %+v", after)
	}
	if again := m.flush(); len(again) != 0 {
		t.Errorf("a flush after the repair committed %v again", again)
	}
}

func TestRepairRequeuesABatchMarkedInALostCommit(t *testing.T) {
	m := newMemRepo(t)
	m.flushed("s1", 1)
	m.record("s1", 2)
	// A flush that committed, was marked, and then lost its commit to a reset before it
	// could finish: the batch names a commit the branch does not hold.
	_, tip, err := m.git.Head()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.j.PlanBatches(tip.String(), time.Now().UTC(), 0); err != nil {
		t.Fatal(err)
	}
	batches, err := m.j.Leftovers(1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.j.MarkCommitted(batches[0], strings.Repeat("ab", 20), journal.Signing{}); err != nil {
		t.Fatal(err)
	}

	if p := onlyProblem(t, m.check(), LostCommit, "which branch main no longer holds"); len(p.Entries) != 2 {
		t.Fatalf("lost entries %v, want the batch's 2", p.Entries)
	}
	done, after := m.repair()
	if done.Requeued != 2 || len(done.Commits) != 1 || !after.Consistent() || after.Observations != 3 {
		t.Fatalf("repair did %+v and left %+v", done, after)
	}
}

func TestCheckPendingEntryAlreadyCommitted(t *testing.T) {
	m := newMemRepo(t)
	ids := m.flushed("s1", 1)
	// Requeue trusts its caller; told wrongly, it makes a duplicate in waiting.
	if _, err := m.j.Requeue(ids); err != nil {
		t.Fatal(err)
	}
	onlyProblem(t, m.check(), PendingCommitted, "a flush would commit it twice")
	// Repair commits nothing then: a flush would make the duplicate.
	if done, after := m.repair(); len(done.Commits) != 0 || !after.Has(PendingCommitted) {
		t.Errorf("repair did %+v and left %+v", done, after)
	}
}

// A commit on the branch whose session record is gone (a person removed sessions/)
// holds entries verify cannot name: they are not lost, and repair commits none again.
func TestCheckUnreadableRecordLosesNothing(t *testing.T) {
	m := newMemRepo(t)
	m.flushed("s1", 2)
	m.gitCLI("rm", "-q", "-r", render.SessionsDir)
	m.gitCLI("commit", "-q", "--amend", "--no-edit")
	if r := m.check(); !r.Has(TrailerMismatch) || r.Has(LostCommit) {
		t.Errorf("problems = %v, want a trailer-mismatch and nothing lost", r.Problems)
	}
	done, after := m.repair()
	if done.Requeued != 0 || len(done.Commits) != 0 || after.Has(LostCommit) {
		t.Errorf("repair did %+v and left %+v", done, after)
	}
}

func TestCheckFilesUnderAgmemDirs(t *testing.T) {
	m := newMemRepo(t)
	m.flushed("s1", 1)
	files := strings.Fields(m.gitCLI("ls-files", "current", render.SessionsDir))
	if len(files) != 2 {
		t.Fatalf("ls-files = %v", files)
	}
	m.gitCLI("mv", files[0], "current/semantic/renamed.md")
	m.gitCLI("commit", "-q", "-m", "rename a memory")

	r := m.check()
	if got, want := kinds(r), []Kind{MissingFromHead, Unexplained}; !slices.Equal(got, want) {
		t.Fatalf("problems = %v, want %v", r.Problems, want)
	}
	if r.Problems[0].Path != files[0] || r.Problems[1].Path != "current/semantic/renamed.md" {
		t.Errorf("paths = %q, %q", r.Problems[0].Path, r.Problems[1].Path)
	}
}

func TestDamagedJournalIsReportedAndLeftAlone(t *testing.T) {
	m := newMemRepo(t)
	m.flushed("s1", 2)
	m.record("s1", 1)
	// Garbage over the first meta page: bbolt would open the journal from the other one,
	// a transaction older, without a word.
	f, err := os.OpenFile(m.j.Path(), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("garbage, not a bbolt meta page, written over it"), 16); err != nil {
		t.Fatal(err)
	}
	f.Close()
	before, err := os.ReadFile(m.j.Path())
	if err != nil {
		t.Fatal(err)
	}

	r := m.check()
	if !r.Damaged() || r.Problems[0].Kind != DamagedJournal || r.Commits != 1 || r.Observations != 2 {
		t.Fatalf("report = %+v, want the damage, and the branch read all the same", r)
	}
	done, after := m.repair()
	if done.Requeued != 0 || done.Commits != nil || !after.Damaged() {
		t.Errorf("repair of a damaged journal did %+v, left %v", done, after.Problems)
	}
	if now, err := os.ReadFile(m.j.Path()); err != nil || !bytes.Equal(now, before) {
		t.Errorf("repair wrote to the damaged journal (%v)", err)
	}
}

func TestRepairLeavesWhatAnotherBranchHolds(t *testing.T) {
	m := newMemRepo(t)
	m.flushed("s1", 1)
	m.flushed("s1", 2)
	m.gitCLI("switch", "-q", "-c", "side", "HEAD~1")

	onlyProblem(t, m.check(), OnOtherBranch, "2 entries of session s1 on branch main, not on the checked-out branch side")
	done, after := m.repair()
	if done.Requeued != 0 || len(done.Commits) != 0 {
		t.Errorf("repair did %+v: committing them on side too would put them twice in the history", done)
	}
	onlyProblem(t, after, OnOtherBranch, "on branch main")

	m.gitCLI("switch", "-q", "main")
	if r := m.check(); !r.Consistent() {
		t.Errorf("back on main: %v", r.Problems)
	}
}
