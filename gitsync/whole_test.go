package gitsync

import (
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agmem/agmem/maintain"
)

// TestWholeIsToldOfAFirstPushAndPull: a first pull and a push of a branch the remote
// lacks move a whole history, and say so to Whole once they have run wholeNotice (here
// none); a push the remote already has moves nothing, and says nothing.
func TestWholeIsToldOfAFirstPushAndPull(t *testing.T) {
	dir := t.TempDir()
	repo, _, err := maintain.Init(filepath.Join(dir, "mem"))
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "--bare", filepath.Join(dir, "remote.git")},
		{"-C", repo.Root, "remote", "add", "origin", filepath.Join(dir, "remote.git")}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	defer func(was time.Duration) { wholeNotice = was }(wholeNotice)
	wholeNotice = 0
	var told atomic.Int32
	opts := Options{Remote: "origin", Timeout: time.Minute, Whole: func() { told.Add(1) }}
	checkTold := func(want int32) {
		t.Helper()
		if got := told.Load(); got != want {
			t.Errorf("Whole told %d times, want %d", got, want)
		}
	}
	if _, err := Pull(repo, opts); err != nil {
		t.Fatal(err)
	}
	checkTold(1)
	if _, err := Push(repo, opts); err != nil {
		t.Fatal(err)
	}
	checkTold(2)
	if p, err := Push(repo, opts); err != nil || !p.UpToDate {
		t.Fatalf("a second push: %+v, %v", p, err)
	}
	checkTold(2)
}
