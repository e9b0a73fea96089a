package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ingest records n native observations of about 1 KiB with one `agmem record --jsonl`,
// as one session, then replays that session as --json from the journal, and, after a
// flush, from git in a fresh clone. Each run reports its wall time and peak RSS.
func ingest(args []string) error {
	fs := flag.NewFlagSet("ingest", flag.ExitOnError)
	bin := fs.String("agmem", "agmem", "the agmem binary")
	n := fs.Int("n", 100000, "observations")
	fs.Parse(args)
	dir, err := newMemoryRepo(*bin, "agmem-bench-ingest-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	input := filepath.Join(dir, ".agmem", "input.jsonl")
	// Written by a process of its own: a child's peak RSS counts the highest its parent's
	// ever was before the exec, and this one must stay small.
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if _, err := run(dir, nil, nil, self, "observations", "-n", strconv.Itoa(*n), "-o", input); err != nil {
		return err
	}
	fi, err := os.Stat(input)
	if err != nil {
		return err
	}
	size := fi.Size()
	fmt.Printf("input: %d observations, %.1f MB of JSONL (results cut from Go's own sources), one session\n",
		*n, float64(size)/1e6)
	printOwnPeak()
	fmt.Printf("%-34s %-10s %-16s %s\n", "", "wall", "observations/s", "peak RSS")

	rec, err := measure(dir, input, os.DevNull, *bin, "--repo", dir, "record", "--jsonl")
	if err != nil {
		return err
	}
	rec.row("record --jsonl", *n)
	rate := float64(*n) / rec.wall.Seconds()
	row(fmt.Sprintf("ingest: record --jsonl of %d", *n), "≥ 50,000/s", fmt.Sprintf("%.0f/s", rate), rate >= 50000)
	row("ingest: peak RSS", "≤ 200 MB", mb(rec.rss), rec.rss <= 200e6)
	fi, err = os.Stat(filepath.Join(dir, ".agmem", "journal.db"))
	if err != nil {
		return err
	}
	var used int64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		used = st.Blocks * 512
	}
	fmt.Printf("%-34s %.1f MB on disk (%.1f MB apparent, sparse): %.2f× the input\n", "journal.db",
		float64(used)/1e6, float64(fi.Size())/1e6, float64(used)/float64(size))
	perInput := float64(used) / float64(size)
	row("journal: bytes on disk ÷ JSON recorded", "≤ 1.5×", fmt.Sprintf("%.2f×", perInput), perInput <= 1.5)

	replayed := filepath.Join(dir, ".agmem", "replayed.jsonl")
	if err := replay(*bin, dir, replayed, "the journal", *n); err != nil {
		return err
	}

	flush, err := measure(dir, os.DevNull, os.DevNull, *bin, "--repo", dir, "flush", "--no-llm")
	if err != nil {
		return err
	}
	flush.row("flush (for scale, no target)", *n)
	clone := dir + "-clone"
	defer os.RemoveAll(clone)
	if out, err := exec.Command("git", "clone", "-q", dir, clone).CombinedOutput(); err != nil {
		return fmt.Errorf("git clone: %w: %s", err, out)
	}
	if _, err := run(clone, nil, nil, *bin, "init", clone); err != nil {
		return err
	}
	return replay(*bin, clone, replayed, "git (a clone)", *n)
}

const benchSession = "bench-ingest"

// looseIngest records n calls of a few hundred bytes that name no session, as one
// `agmem record --jsonl`, into a new memory repo: the lines join agmem's open session,
// and a large record is stored in parts that become visible together. Each binary
// (agmem, and -against) records the same input, the runs interleaved; each reports its
// wall time and peak RSS.
func looseIngest(args []string) error {
	fs := flag.NewFlagSet("jsonl", flag.ExitOnError)
	bin := fs.String("agmem", "agmem", "the agmem binary")
	against := fs.String("against", "", "another agmem binary, measured in the same runs")
	n := fs.Int("n", 1000000, "lines")
	reps := fs.Int("reps", 2, "runs of each binary")
	fs.Parse(args)
	tmp, err := os.MkdirTemp("", "agmem-bench-jsonl-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	input := filepath.Join(tmp, "input.jsonl")
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if _, err := run(tmp, nil, nil, self, "observations", "-loose", "-n", strconv.Itoa(*n), "-o", input); err != nil {
		return err
	}
	fi, err := os.Stat(input)
	if err != nil {
		return err
	}
	fmt.Printf("input: %d lines naming no session, %.1f MB of JSONL\n", *n, float64(fi.Size())/1e6)
	printOwnPeak()
	bins := []string{*bin}
	if *against != "" {
		bins = append(bins, *against)
	}
	for rep := range *reps {
		for _, b := range bins {
			dir, err := newMemoryRepo(b, "agmem-bench-jsonl-")
			if err != nil {
				return err
			}
			m, err := measure(dir, input, os.DevNull, b, "--repo", dir, "record", "--jsonl")
			os.RemoveAll(dir)
			if err != nil {
				return err
			}
			m.row(fmt.Sprintf("run %d: %s", rep+1, filepath.Base(filepath.Dir(b))+"/"+filepath.Base(b)), *n)
			if b == *bin && rep == *reps-1 {
				row(fmt.Sprintf("ingest: record --jsonl of %d lines naming no session, peak RSS", *n), "≤ 200 MB", mb(m.rss), m.rss <= 200e6)
			}
		}
	}
	return nil
}

// observations writes n native observations to a file: read_file calls whose results
// are about 1 KiB pieces of Go's standard library, as a coding agent reads them.
func observations(args []string) error {
	fs := flag.NewFlagSet("observations", flag.ExitOnError)
	n := fs.Int("n", 100000, "observations")
	path := fs.String("o", "observations.jsonl", "the file to write")
	loose := fs.Bool("loose", false, "shell calls of a few hundred bytes that name no session and no call id")
	fs.Parse(args)
	size := 1000
	if *loose {
		size = 300
	}
	pieces, err := sourcePieces(min(*n, 100000), size)
	if err != nil {
		return err
	}
	f, err := os.Create(*path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for i := 0; i < *n; i++ {
		p := pieces[i%len(pieces)]
		at := start.Add(time.Duration(i) * 100 * time.Millisecond).Format(time.RFC3339Nano)
		line, err := json.Marshal(map[string]any{
			"tool_name":   "read_file",
			"tool_use_id": fmt.Sprintf("toolu_%08d", i),
			"arguments":   map[string]string{"path": p.path},
			"result":      p.text,
			"session_id":  benchSession,
			"timestamp":   at,
		})
		if *loose {
			line, err = json.Marshal(map[string]any{
				"tool_name": "Bash",
				"arguments": map[string]string{"command": fmt.Sprintf("go test ./%s # %d", filepath.Dir(p.path), i)},
				"result":    p.text,
				"timestamp": at,
			})
		}
		if err != nil {
			return err
		}
		w.Write(line)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		return err
	}
	// Written back now, not while the record it feeds is timed.
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

type piece struct{ path, text string }

// sourcePieces cuts n pieces of about size bytes from Go's sources, again from the
// start if they run out.
func sourcePieces(n, size int) ([]piece, error) {
	root := filepath.Join(runtime.GOROOT(), "src")
	var pieces []piece
	errEnough := errors.New("enough")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for len(data) >= size && len(pieces) < n {
			pieces = append(pieces, piece{rel, strings.ToValidUTF8(string(data[:size]), "?")})
			data = data[size:]
		}
		if len(pieces) == n {
			return errEnough
		}
		return nil
	})
	if err != nil && err != errEnough {
		return nil, err
	}
	if len(pieces) == 0 {
		return nil, fmt.Errorf("no Go sources under %s", root)
	}
	for i := len(pieces); i < n; i++ {
		pieces = append(pieces, pieces[i%len(pieces)])
	}
	return pieces, nil
}

// replay times replay --json of the bench's session of n observations in repo into the
// file out, checks that it gave n lines, and prints its row and its summary rows.
func replay(bin, repo, out, from string, n int) error {
	m, err := measure(repo, os.DevNull, out, bin, "--repo", repo, "replay", "--json", "--session", benchSession)
	if err == nil {
		err = checkLines(out, n)
	}
	if err != nil {
		return err
	}
	m.row("replay --json, from "+from, n)
	rate := float64(n) / m.wall.Seconds()
	row("replay from "+from+": observations/s", "≥ 100,000/s", fmt.Sprintf("%.0f/s", rate), rate >= 100000)
	row("replay from "+from+": peak RSS", "≤ 100 MB", mb(m.rss), m.rss <= 100e6)
	return nil
}

func mb(bytes int64) string { return fmt.Sprintf("%.0f MB", float64(bytes)/1e6) }

// checkLines fails unless the file at path has n lines. It reads the file a piece at a
// time: this process's peak RSS counts in its later children's.
func checkLines(path string, n int) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	got := 0
	buf := make([]byte, 1<<20)
	for {
		k, err := f.Read(buf)
		got += bytes.Count(buf[:k], []byte{'\n'})
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if got != n {
		return fmt.Errorf("%s: %d lines, want %d", path, got, n)
	}
	return nil
}

// measured is one process's wall time, peak RSS and page faults.
type measured struct {
	wall   time.Duration
	rss    int64 // bytes
	faults int64 // minor page faults: memory touched for the first time, or not yet mapped
}

func (m measured) row(name string, n int) {
	fmt.Printf("%-34s %-10s %-16.0f %s\n", name, fmt.Sprintf("%.2f s", m.wall.Seconds()),
		float64(n)/m.wall.Seconds(), mb(m.rss))
}

// measure runs a process with stdin and stdout on files.
func measure(dir, stdin, stdout, name string, args ...string) (measured, error) {
	in, err := os.Open(stdin)
	if err != nil {
		return measured{}, err
	}
	defer in.Close()
	out, err := os.Create(stdout)
	if err != nil {
		return measured{}, err
	}
	defer out.Close()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Stdin, cmd.Stdout = dir, in, out
	var errb strings.Builder
	cmd.Stderr = &errb
	start := time.Now()
	err = cmd.Run()
	m := measured{wall: time.Since(start)}
	if err != nil {
		return m, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, errb.String())
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.rss, m.faults = ru.Maxrss*1024, ru.Minflt
	}
	return m, nil
}
