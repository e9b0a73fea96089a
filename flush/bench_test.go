package flush_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/agmem/agmem/flush"
	"github.com/agmem/agmem/journal"
	"github.com/agmem/agmem/maintain"
	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/sign"
	"github.com/agmem/agmem/vcs"
)

// BenchmarkFlushCommit flushes one session of one observation per iteration into each
// of two repos, a commit each: one unsigned, one signed with an ed25519 key from a file.
// The two alternate, so that the disk's and the machine's drift falls on both alike;
// the difference is what signing costs a flush commit (BENCHMARKS.md).
func BenchmarkFlushCommit(b *testing.B) {
	key := filepath.Join(b.TempDir(), "key")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		b.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	unsigned, signed := newBenchRepo(b, key, sign.Off), newBenchRepo(b, key, sign.Required)
	var took [2]time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		for k, r := range []*benchRepo{unsigned, signed} {
			took[k] += r.flushOne(b, i)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(took[0].Microseconds())/n/1000, "unsigned-ms/commit")
	b.ReportMetric(float64(took[1].Microseconds())/n/1000, "signed-ms/commit")
	b.ReportMetric(float64((took[1]-took[0]).Microseconds())/n/1000, "signing-ms/commit")
}

type benchRepo struct {
	dir  string
	git  *vcs.Git
	j    *journal.Journal
	mode sign.Mode
}

func newBenchRepo(b *testing.B, key string, mode sign.Mode) *benchRepo {
	repo, _, err := maintain.Init(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	for _, kv := range [][2]string{{"gpg.format", "ssh"}, {"user.signingKey", key}} {
		if out, err := exec.Command("git", "-C", repo.Root, "config", kv[0], kv[1]).CombinedOutput(); err != nil {
			b.Fatalf("git config: %v\n%s", err, out)
		}
	}
	git, err := vcs.Open(repo.Root)
	if err != nil {
		b.Fatal(err)
	}
	return &benchRepo{dir: repo.StateDir(), git: git, j: repo.Journal(), mode: mode}
}

// flushOne records one observation and returns how long its flush took.
func (r *benchRepo) flushOne(b *testing.B, i int) time.Duration {
	now := time.Now()
	o := &memory.Observation{ID: memory.NewID(now), SessionID: fmt.Sprint("s", i), Timestamp: now,
		ToolName: "Read", Arguments: json.RawMessage(`{"file_path":"a.go"}`), MemoryType: memory.Semantic}
	if _, err := r.j.Append(journal.Entries([]memory.Entry{{Observation: o}}), journal.AppendOptions{IdleGap: time.Hour, Now: now}); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	commits, err := flush.Run(r.dir, r.j, r.git, flush.Options{Sign: r.mode})
	took := time.Since(start)
	if err != nil || len(commits) != 1 || commits[0].Signing.Signed != (r.mode == sign.Required) {
		b.Fatalf("flush: %v, %+v", err, commits)
	}
	return took
}
