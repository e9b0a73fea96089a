// Command bench measures agmem as a user's machine sees it: whole processes, timed
// beside a reference measured in the same run (a process that does nothing, the git
// CLI), so that the ratios hold on a machine whose absolute speed drifts.
//
//	go run ./scripts/bench hook  -agmem BIN [-runs 500] [-against OLD_BIN]
//	go run ./scripts/bench flush -agmem BIN [-n 1000,10000] [-history 100000]
//	go run ./scripts/bench concurrent -agmem BIN [-writers 16] [-n 10000]
//	go run ./scripts/bench ingest -agmem BIN [-n 100000]
//	go run ./scripts/bench jsonl -agmem BIN [-n 1000000] [-against OLD_BIN]
//	go run ./scripts/bench search -agmem BIN [-n 1000000]
//	go run ./scripts/bench machine -agmem BIN [-runs 50]
package main

import (
	"bytes"
	"cmp"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: bench hook|flush|concurrent|mcp|ingest|jsonl|search|update|machine [flags]")
		os.Exit(1)
	}
	var err error
	switch os.Args[1] {
	case "hook":
		err = hook(os.Args[2:])
	case "flush":
		err = flushes(os.Args[2:])
	case "concurrent":
		err = concurrent(os.Args[2:])
	case "mcp":
		err = mcpLatency(os.Args[2:])
	case "ingest":
		err = ingest(os.Args[2:])
	case "jsonl":
		err = looseIngest(os.Args[2:])
	case "search":
		err = searchBench(os.Args[2:])
	case "update":
		err = updateBench(os.Args[2:])
	case "machine":
		err = machine(os.Args[2:])
	case "observations": // ingest's input, written by a process of its own
		err = observations(os.Args[2:])
	case "nothing": // a Go program that reads its stdin and ends: concurrent's floor
		_, err = io.Copy(io.Discard, os.Stdin)
	default:
		err = fmt.Errorf("unknown benchmark %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// run times one process.
func run(dir string, stdin []byte, env []string, name string, args ...string) (time.Duration, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		return d, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, errb.String())
	}
	return d, nil
}

func percentile[T cmp.Ordered](xs []T, p float64) T {
	s := slices.Sorted(slices.Values(xs))
	return s[int(p*float64(len(s)-1)+0.5)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }

// newMemoryRepo makes a memory repo in a new temporary directory.
func newMemoryRepo(bin, prefix string) (string, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", err
	}
	if _, err := run(dir, nil, nil, bin, "init", dir); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// hookPayload is a Claude Code PostToolUse payload of about 2 KiB.
func hookPayload(i int) []byte {
	return []byte(fmt.Sprintf(`{"session_id":"bench-session","transcript_path":"/home/ana/.claude/projects/-home-ana-blog/bench-session.jsonl","cwd":"/home/ana/blog","permission_mode":"acceptEdits","hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{"file_path":"/home/ana/blog/src/build.ts"},"tool_response":{"type":"text","file":{"filePath":"/home/ana/blog/src/build.ts","content":%q,"numLines":40,"startLine":1,"totalLines":40}},"tool_use_id":"toolu_bench_%08d","duration_ms":2}`,
		strings.Repeat("export const line = 'a line of TypeScript source code';\n", 32), i))
}

// secretsPayload is a Claude Code PostToolUse payload of about 2 KiB of a Bash call
// whose command and output hold six secrets of five kinds.
func secretsPayload(i int) []byte {
	return []byte(fmt.Sprintf(`{"session_id":"bench-session","transcript_path":"/home/ana/.claude/projects/-home-ana-blog/bench-session.jsonl","cwd":"/home/ana/blog","permission_mode":"acceptEdits","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LXBheWxvYWQ.Zx81Qp0LmN3vB7cK' https://api.example.com/deploy","description":"deploy"},"tool_response":{"stdout":%q,"stderr":"","interrupted":false,"isImage":false},"tool_use_id":"toolu_bench_%08d","duration_ms":2}`,
		strings.Repeat("deploy step ok: uploaded artifact to the staging bucket\n", 24)+
			"export GITHUB_TOKEN=ghp_Zx81Qp0LmN3vB7cKa9Rt2Yw4Ue6Io8Pa1Sd3\nAWS_ACCESS_KEY_ID=AKIAZ5GMHYJK7Q2XWN4P\nAWS_SECRET_ACCESS_KEY=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\ndb: postgres://app:Qp0LmN3vB7@db:5432/app\npassword=hunter2hunter2\n", i))
}

// recordCommand is what agmem's hooks run to record: agmem-record beside bin, as hooks
// install finds it, else bin record.
func recordCommand(bin string) []string {
	standalone := filepath.Join(filepath.Dir(bin), "agmem-record")
	if _, err := os.Stat(standalone); err == nil {
		return []string{standalone}
	}
	return []string{bin, "record"}
}

func hook(args []string) error {
	fs := flag.NewFlagSet("hook", flag.ExitOnError)
	bin := fs.String("agmem", "agmem", "the agmem binary (its hooks run agmem-record beside it, if it is there)")
	runs := fs.Int("runs", 500, "runs of each command")
	scale := fs.Bool("scale", false, "also time node -e 0 and python3 -c pass")
	against := fs.String("against", "", "another build's agmem (its agmem-record beside it), timed interleaved with this one: before and after a change")
	fs.Parse(args)
	dir, err := newMemoryRepo(*bin, "agmem-bench-hook-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var otherDir string
	var otherCmd []string
	if *against != "" {
		if otherDir, err = newMemoryRepo(*against, "agmem-bench-hook-against-"); err != nil {
			return err
		}
		defer os.RemoveAll(otherDir)
		otherCmd = recordCommand(*against)
	}
	env := []string{"AGMEM_REPO=" + dir}
	hookCmd := recordCommand(*bin)
	name := strings.Join(append([]string{filepath.Base(hookCmd[0])}, hookCmd[1:]...), " ")
	fmt.Printf("payloads: %d bytes (no secret), %d bytes (6 secrets); %d runs each, interleaved; hooks run %s\n",
		len(hookPayload(0)), len(secretsPayload(0)), *runs, name)
	var truth, rec, secret, full, other, otherSecret []time.Duration
	for i := 0; i < *runs; i++ {
		d, err := run(dir, nil, nil, "/bin/true")
		if err != nil {
			return err
		}
		truth = append(truth, d)
		if otherCmd != nil {
			if d, err = run(otherDir, hookPayload(i), []string{"AGMEM_REPO=" + otherDir}, otherCmd[0], otherCmd[1:]...); err != nil {
				return err
			}
			other = append(other, d)
			if d, err = run(otherDir, secretsPayload(i), []string{"AGMEM_REPO=" + otherDir}, otherCmd[0], otherCmd[1:]...); err != nil {
				return err
			}
			otherSecret = append(otherSecret, d)
		}
		if d, err = run(dir, hookPayload(i), env, hookCmd[0], hookCmd[1:]...); err != nil {
			return err
		}
		rec = append(rec, d)
		if d, err = run(dir, secretsPayload(i), env, hookCmd[0], hookCmd[1:]...); err != nil {
			return err
		}
		secret = append(secret, d)
		if len(hookCmd) == 1 { // agmem record as well, for what agmem-record saves
			if d, err = run(dir, hookPayload(*runs+i), env, *bin, "record"); err != nil {
				return err
			}
			full = append(full, d)
		}
	}
	line := func(what string, ds []time.Duration) {
		fmt.Printf("%-38s median %-10s p99 %-10s − /bin/true %s\n", what, ms(percentile(ds, .5)), ms(percentile(ds, .99)), ms(percentile(ds, .5)-percentile(truth, .5)))
	}
	fmt.Printf("%-38s median %-10s p99 %s\n", "/bin/true", ms(percentile(truth, .5)), ms(percentile(truth, .99)))
	line(name+" (PostToolUse)", rec)
	if other != nil {
		line("against: "+strings.Join(otherCmd, " ")+" (PostToolUse)", other)
	}
	line(name+" (6 secrets)", secret)
	if other != nil {
		line("against: "+strings.Join(otherCmd, " ")+" (6 secrets)", otherSecret)
	}
	if full != nil {
		line("agmem record (PostToolUse)", full)
	}
	above := percentile(rec, .5) - percentile(truth, .5)
	row("hook: "+name+" − /bin/true, median", "≤ 3 ms", ms(above), above <= 3*time.Millisecond)
	row("hook: "+name+" p99", "≤ 20 ms", ms(percentile(rec, .99)), percentile(rec, .99) <= 20*time.Millisecond)
	if *scale {
		for _, c := range [][]string{{"node", "-e", "0"}, {"python3", "-c", "pass"}} {
			if _, err := exec.LookPath(c[0]); err != nil {
				continue
			}
			var ds []time.Duration
			for i := 0; i < 20; i++ {
				d, err := run(dir, nil, nil, c[0], c[1:]...)
				if err != nil {
					return err
				}
				ds = append(ds, d)
			}
			fmt.Printf("%-38s median %s (20 runs)\n", strings.Join(c, " "), ms(percentile(ds, .5)))
		}
	}
	return nil
}

func flushes(args []string) error {
	fs := flag.NewFlagSet("flush", flag.ExitOnError)
	bin := fs.String("agmem", "agmem", "the agmem binary")
	sizes := fs.String("n", "1000,10000", "pending observations per flush")
	history := fs.Int("history", 100000, "files in the history of the second repo")
	reps := fs.Int("reps", 3, "runs of each measurement; the median is shown")
	fs.Parse(args)
	var ns []int
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(s)
		if err != nil {
			return err
		}
		ns = append(ns, n)
	}
	root, err := os.MkdirTemp("", "agmem-bench-flush-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)

	big := filepath.Join(root, "history")
	start := time.Now()
	if err := makeHistory(big, *history); err != nil {
		return err
	}
	fmt.Printf("made a repo with %d files in its history in %s\n", *history, time.Since(start).Round(time.Millisecond))
	printOwnPeak()

	fmt.Printf("median of %d runs each\n", *reps)
	fmt.Printf("%-8s  %-12s  %-14s  %-7s  %s\n", "pending", "new repo", fmt.Sprintf("%dk history", *history/1000), "ratio", "git add -A && git commit, same files, same history")
	for _, n := range ns {
		var dNew, dHist, dGit []time.Duration
		var peak int64 // RSS, of the flushes into the big history
		for r := 0; r < *reps; r++ {
			fresh := filepath.Join(root, fmt.Sprintf("new-%d-%d", n, r))
			if _, err := run(root, nil, nil, *bin, "init", fresh); err != nil {
				return err
			}
			m, err := timeFlush(*bin, fresh, n)
			if err != nil {
				return err
			}
			dNew = append(dNew, m.wall)

			work := filepath.Join(root, fmt.Sprintf("hist-%d-%d", n, r))
			if _, err := run(root, nil, nil, "cp", "-a", big, work); err != nil {
				return err
			}
			if _, err := run(root, nil, nil, *bin, "init", work); err != nil {
				return err
			}
			gitCopy := work + "-git"
			if _, err := run(root, nil, nil, "cp", "-a", work, gitCopy); err != nil {
				return err
			}
			// The history's index is git's, written whole by its checkout; agmem's first flush
			// makes it a split index, as a repo agmem flushes into has (vcs/splitindex.go).
			// That flush is timed apart: it happens once in a repo's life.
			first, err := timeFlush(*bin, work, 1)
			if err != nil {
				return err
			}
			fmt.Printf("first flush into the history (its index split): %s\n", ms(first.wall))
			if m, err = timeFlush(*bin, work, n); err != nil {
				return err
			}
			dHist, peak = append(dHist, m.wall), max(peak, m.rss)
			d, err := timeGitCommit(work, gitCopy)
			if err != nil {
				return err
			}
			dGit = append(dGit, d)
			// Nothing is removed until the end: on ext4, creating files soon after many
			// were deleted costs far more, which would time the file system, not agmem.
		}
		mNew, mHist, mGit := percentile(dNew, .5), percentile(dHist, .5), percentile(dGit, .5)
		ratio, ofGit := float64(mHist)/float64(mNew), float64(mHist)/float64(mGit)
		fmt.Printf("%-8d  %-12s  %-14s  %-7s  %s (agmem %.2f× of it); peak RSS %s\n", n, ms(mNew), ms(mHist),
			fmt.Sprintf("%.2f×", ratio), ms(mGit), ofGit, mb(peak))
		if n == 10000 {
			row("flush 10k: 100k history ÷ new repo", "≤ 1.3×", fmt.Sprintf("%.2f×", ratio), ratio <= 1.3)
			row("flush 10k: agmem ÷ git add -A && git commit", "< 1×", fmt.Sprintf("%.2f×", ofGit), ofGit < 1)
			row("flush 10k into the 100k history: peak RSS", "≤ 300 MB", mb(peak), peak <= 300e6)
		}
	}
	return nil
}

// timeFlush records n native observations (untimed, one --jsonl call) and times the flush,
// without a model: a key in the environment must not put the network in the figures.
func timeFlush(bin, repo string, n int) (measured, error) {
	if _, err := timeRecordJSONL(bin, repo, n); err != nil {
		return measured{}, err
	}
	settle()
	return measure(repo, os.DevNull, os.DevNull, bin, "--repo", repo, "flush", "--no-llm")
}

// timeGitCommit writes into gitCopy the files that agmem's last flush added to repo,
// and times `git add -A && git commit` of them.
func timeGitCommit(repo, gitCopy string) (time.Duration, error) {
	archive := exec.Command("sh", "-c", fmt.Sprintf("git -C %q archive HEAD current sessions | tar -x -C %q", repo, gitCopy))
	if out, err := archive.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("copy files: %v: %s", err, out)
	}
	settle()
	d1, err := run(gitCopy, nil, nil, "git", "add", "-A")
	if err != nil {
		return 0, err
	}
	d2, err := run(gitCopy, nil, nil, "git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "bench")
	return d1 + d2, err
}

// printOwnPeak says how much of a child's peak RSS may be this process's: on Linux a
// child's counts the highest its parent's was before the exec.
func printOwnPeak() {
	var self syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	fmt.Printf("(a child's peak RSS counts this process's own, %s, from before its exec)\n", mb(self.Maxrss*1024))
}

// settle writes every dirty page out before a timed run: on ext4 an fsync waits for
// the journal commit that carries everything else pending, such as the copy of a
// 100,000-file repo made just before.
func settle() { exec.Command("sync").Run() }

// makeHistory makes a git repo whose history holds files files, laid out as agmem lays
// out memory (layout 2: each memory type by day, over a year), with git fast-import.
func makeHistory(dir string, files int) error {
	if _, err := run("", nil, nil, "git", "init", "-q", "-b", "main", dir); err != nil {
		return err
	}
	var b bytes.Buffer
	const perCommit = 10000
	for c := 0; c*perCommit < files; c++ {
		fmt.Fprintf(&b, "commit refs/heads/main\ncommitter bench <b@b> %d +0000\ndata 6\nbench\n", 1700000000+c)
		if c == 0 {
			fmt.Fprintf(&b, "M 100644 inline .agmem-layout\ndata 2\n2\n")
		}
		for i := c * perCommit; i < (c+1)*perCommit && i < files; i++ {
			day := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i*365/max(files, 1)).Format("2006-01-02")
			var path string
			switch i % 10 {
			case 0, 1, 2, 3, 4:
				path = fmt.Sprintf("current/episodic/%s/10-00-%02d-run_command-%012d.md", day, i%60, i)
			case 5, 6, 7, 8:
				path = fmt.Sprintf("current/semantic/%s/10-00-%02d-read_file-%012d.md", day, i%60, i)
			default:
				path = fmt.Sprintf("current/procedural/%s/10-00-%02d-generate_code-%012d.md", day, i%60, i)
			}
			content := fmt.Sprintf("---\nobservation_id: %d\n---\n\n# observation %d\n", i, i)
			fmt.Fprintf(&b, "M 100644 inline %s\ndata %d\n%s\n", path, len(content), content)
		}
	}
	imp := exec.Command("git", "fast-import", "--quiet")
	imp.Dir = dir
	imp.Stdin = &b
	if out, err := imp.CombinedOutput(); err != nil {
		return fmt.Errorf("fast-import: %v: %s", err, out)
	}
	co := exec.Command("git", "checkout", "-q", "-f", "main")
	co.Dir = dir
	if out, err := co.CombinedOutput(); err != nil {
		return fmt.Errorf("checkout: %v: %s", err, out)
	}
	return nil
}

// concurrent times hook records from many processes at once, first alone, then while a
// flush of n observations runs: the flush must not make them wait for its git work.
func concurrent(args []string) error {
	fs := flag.NewFlagSet("concurrent", flag.ExitOnError)
	bin := fs.String("agmem", "agmem", "the agmem binary")
	writers := fs.Int("writers", 16, "record processes at once")
	n := fs.Int("n", 10000, "pending observations the flush commits")
	fs.Parse(args)
	dir, err := newMemoryRepo(*bin, "agmem-bench-concurrent-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	hookCmd := recordCommand(*bin)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	// Each writer's own memory repo, for records that share no journal lock.
	own := make([]string, *writers)
	for w := range own {
		if own[w], err = newMemoryRepo(*bin, "agmem-bench-concurrent-own-"); err != nil {
			return err
		}
		defer os.RemoveAll(own[w])
	}
	// hammer runs command from all writers, with a hook payload on stdin, until stop is
	// closed (or each has run it min times), each in the shared repo or, if apart, its own.
	hammer := func(command []string, apart bool, stop <-chan struct{}, min int) ([]time.Duration, int) {
		var mu sync.Mutex
		var ds []time.Duration
		failed := 0
		var wg sync.WaitGroup
		for w := 0; w < *writers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						if i >= min {
							return
						}
					default:
					}
					repo := dir
					if apart {
						repo = own[w]
					}
					d, err := run(repo, hookPayload(w*1000000+i), []string{"AGMEM_REPO=" + repo}, command[0], command[1:]...)
					mu.Lock()
					ds = append(ds, d)
					if err != nil {
						failed++
					}
					mu.Unlock()
					if stop == nil && i+1 >= min {
						return
					}
				}
			}(w)
		}
		wg.Wait()
		return ds, failed
	}
	// The floor, in the same run: processes that do nothing, 16 at once on these cores.
	trueAlone, _ := hammer([]string{"/bin/true"}, false, nil, 20)
	goAlone, _ := hammer([]string{self, "nothing"}, false, nil, 20)
	// And records that wait for no lock: what the journal lock costs under contention.
	apart, failedApart := hammer(hookCmd, true, nil, 20)
	alone, failedAlone := hammer(hookCmd, false, nil, 20)
	if _, err := timeRecordJSONL(*bin, dir, *n); err != nil {
		return err
	}
	stop := make(chan struct{})
	var flushTime time.Duration
	var flushErr error
	go func() {
		flushTime, flushErr = run(dir, nil, nil, *bin, "--repo", dir, "flush", "--no-llm")
		close(stop)
	}()
	during, failedDuring := hammer(hookCmd, false, stop, 1)
	if flushErr != nil {
		return flushErr
	}
	fmt.Printf("%d %s processes at once (hook payload); flush of %d observations took %s\n", *writers, filepath.Base(hookCmd[0]), *n, ms(flushTime))
	fmt.Printf("%-28s  %-10s  %-10s  %s\n", "", "p50", "p99", "records (failed)")
	fmt.Printf("%-28s  %-10s  %-10s  %d\n", "/bin/true, alone", ms(percentile(trueAlone, .5)), ms(percentile(trueAlone, .99)), len(trueAlone))
	fmt.Printf("%-28s  %-10s  %-10s  %d\n", "Go, reads stdin, alone", ms(percentile(goAlone, .5)), ms(percentile(goAlone, .99)), len(goAlone))
	fmt.Printf("%-28s  %-10s  %-10s  %d (%d)\n", "alone, a repo each", ms(percentile(apart, .5)), ms(percentile(apart, .99)), len(apart), failedApart)
	fmt.Printf("%-28s  %-10s  %-10s  %d (%d)\n", "alone", ms(percentile(alone, .5)), ms(percentile(alone, .99)), len(alone), failedAlone)
	fmt.Printf("%-28s  %-10s  %-10s  %d (%d)\n", "during the flush", ms(percentile(during, .5)), ms(percentile(during, .99)), len(during), failedDuring)
	p99 := percentile(during, .99)
	row(fmt.Sprintf("concurrency: %d records during a flush, p99", *writers), "≤ 50 ms, none failed",
		fmt.Sprintf("%s, %d failed", ms(p99), failedDuring), p99 <= 50*time.Millisecond && failedDuring == 0)
	return nil
}

// timeRecordJSONL records n native observations with one record --jsonl.
func timeRecordJSONL(bin, repo string, n int) (time.Duration, error) {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		tool := []string{"read_file", "run_command", "generate_code"}[i%3]
		fmt.Fprintf(&b, `{"tool_name":%q,"arguments":{"path":"src/file-%d.go"},"result":%q,"session_id":"bench-%d"}`+"\n",
			tool, i, strings.Repeat("result text of a tool call; ", 30), i%4)
	}
	return run(repo, b.Bytes(), nil, bin, "--repo", repo, "record", "--jsonl")
}
