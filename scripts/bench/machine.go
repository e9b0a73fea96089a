package main

import (
	"flag"
	"fmt"
	"os"
	"syscall"
	"time"
)

// machine measures what this machine charges every process before it does any work
// of its own: a page of memory touched for the first time, and the start of a program
// that does nothing, beside agmem's start. On a virtual machine page faults can be a
// large share of a process's time (by their count and a fresh page's cost, up to a
// third of agmem version's here); these are the references the other benchmarks'
// figures read against.
func machine(args []string) error {
	fs := flag.NewFlagSet("machine", flag.ExitOnError)
	bin := fs.String("agmem", "agmem", "the agmem binary")
	runs := fs.Int("runs", 50, "starts timed of each program")
	fs.Parse(args)

	var touched []time.Duration
	for range 5 {
		d, err := touchFresh(64 << 20)
		if err != nil {
			return err
		}
		touched = append(touched, d)
	}
	fmt.Printf("a page of memory (%d KiB) touched for the first time: median %.1f µs\n",
		os.Getpagesize()>>10, float64(percentile(touched, .5))/float64(time.Microsecond))

	self, err := os.Executable()
	if err != nil {
		return err
	}
	for _, p := range []struct {
		what string
		argv []string
	}{
		{"a Go program that does nothing", []string{self, "nothing"}},
		{"agmem version", []string{*bin, "version"}},
	} {
		var walls []time.Duration
		var faults []int64
		for range *runs {
			m, err := measure("", os.DevNull, os.DevNull, p.argv[0], p.argv[1:]...)
			if err != nil {
				return err
			}
			walls, faults = append(walls, m.wall), append(faults, m.faults)
		}
		fmt.Printf("%s: median %s, %d page faults\n", p.what, ms(percentile(walls, .5)), percentile(faults, .5))
	}
	return nil
}

// touchFresh maps n bytes of memory no process has touched and writes a byte of each
// page, returning the time each page took.
func touchFresh(n int) (time.Duration, error) {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return 0, err
	}
	defer syscall.Munmap(b)
	// Pages of their own size, not a huge page's share, whatever the machine's default.
	if err := syscall.Madvise(b, syscall.MADV_NOHUGEPAGE); err != nil {
		return 0, err
	}
	page := os.Getpagesize()
	t := time.Now()
	for i := 0; i < n; i += page {
		b[i] = 1
	}
	return time.Since(t) / time.Duration(n/page), nil
}
