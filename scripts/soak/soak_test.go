package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestShortSoak is the soak in small: forty simulated days of three agents, with the
// daemon flushing and pushing and gc each month, and every check of the year's run.
func TestShortSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("builds agmem and runs it for some seconds")
	}
	bin := filepath.Join(t.TempDir(), "agmem")
	if out, err := exec.Command("go", "build", "-o", bin, "../..").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	work := t.TempDir()
	res, err := run(config{agmem: bin, days: 40, observations: 4000, sessions: 40, work: work}, os.Stdout)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.months) != 2 || res.months[1].observations != 4000 {
		t.Fatalf("months: %+v", res.months)
	}
	png := filepath.Join(work, "soak.png")
	if err := plot(res.months, png); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(png); err != nil || fi.Size() < 1000 {
		t.Fatalf("the plot: %v", err)
	}
}
