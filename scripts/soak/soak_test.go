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
	out, err := os.Create(filepath.Join(t.TempDir(), "soak.out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	png := filepath.Join(work, "soak.png")
	res, err := run(config{agmem: bin, days: 40, observations: 4000, sessions: 40, work: work, png: png}, out)
	table, _ := os.ReadFile(out.Name())
	t.Logf("the soak printed:\n%s", table)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.months) != 2 || res.months[1].observations != 4000 {
		t.Fatalf("months: %+v", res.months)
	}
	if fi, err := os.Stat(png); err != nil || fi.Size() < 1000 {
		t.Fatalf("the plot: %v", err)
	}
	// The plot is made again from the printed table.
	months, err := readTable(out.Name())
	if err != nil || len(months) != 2 {
		t.Fatalf("the table read back: %+v, %v", months, err)
	}
	if got, want := months[1], res.months[1]; got.observations != want.observations || got.files != want.files ||
		got.flushP50 != want.flushP50 || got.flushP99 != want.flushP99 || got.pushP50 != want.pushP50 {
		t.Fatalf("month 2 read back as %+v, printed from %+v", got, want)
	}
}
