package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/agmem/agmem/hooks"
	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/render"
)

// searchBench measures reading memory back on a memory repo of a year of agents: n
// observations in sessions of perSession each, over 365 days, from 3 agents in 4
// projects, each session one agmem commit of its session record and its observations'
// markdown files (made with git fast-import, in agmem's layout 2). It times: the index built from scratch, and its
// size against the text it indexes; agmem search of 100 queries, whole processes,
// beside git grep of the same words in the same repo; agmem context as a SessionStart
// hook; a search through a running agmem mcp serve; and the index's update after a
// flush of 1,000 observations, against that flush.
func searchBench(args []string) error {
	fs := flag.NewFlagSet("search", flag.ExitOnError)
	bin := fs.String("agmem", "agmem", "the agmem binary")
	n := fs.Int("n", 1000000, "observations in the repo")
	perSession := fs.Int("per-session", 200, "observations per session")
	queries := fs.Int("queries", 100, "searches timed")
	greps := fs.Int("greps", 20, "of them, also timed as git grep")
	keep := fs.Bool("keep", false, "keep the repo, to look at it after")
	rounds := fs.Int("rounds", 7, "flushes of 1,000 of each kind, for the index's update")
	fs.Parse(args)

	dir, err := newMemoryRepo(*bin, "agmem-bench-search-")
	if err != nil {
		return err
	}
	if *keep {
		fmt.Println("the repo:", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	start := time.Now()
	text, words, err := makeYear(*bin, dir, *n, *perSession)
	if err != nil {
		return err
	}
	fmt.Printf("made a repo of %d observations in %d sessions (%s of text indexed) in %.1fs\n",
		*n, *n / *perSession, mb(text), time.Since(start).Seconds())
	settle()

	build, err := measure(dir, os.DevNull, os.DevNull, *bin, "--repo", dir, "index", "--rebuild")
	if err != nil {
		return err
	}
	size := fileSize(filepath.Join(dir, ".agmem", "index.db")) + fileSize(filepath.Join(dir, ".agmem", "index.db-wal")) +
		dirSize(filepath.Join(dir, ".agmem", "search"))
	rate := float64(*n) / build.wall.Seconds()
	fmt.Printf("index from scratch: %.1f s, %.0f observations/s, peak RSS %s; %s on disk, %.2f× the text\n",
		build.wall.Seconds(), rate, mb(build.rss), mb(size), float64(size)/float64(text))
	row("search: index built from scratch", "≥ 50,000/s", fmt.Sprintf("%.0f/s", rate), rate >= 50000)
	ratio := float64(size) / float64(text)
	row("search: index size ÷ text indexed", "≤ 0.5×", fmt.Sprintf("%.2f×", ratio), ratio <= 0.5)

	// The queries: common words and rare ones, phrases, filters.
	rnd := rand.New(rand.NewPCG(7, 11))
	var qs [][]string
	kinds := []string{"a common word", "a common word", "a rare word", "a phrase of common words", "a rare word of one agent"}
	for i := range *queries {
		var q []string
		switch i % 5 {
		case 0, 1:
			q = []string{commonWords[rnd.IntN(len(commonWords))]}
		case 2:
			q = []string{words[rnd.IntN(len(words))]}
		case 3:
			q = []string{`"` + commonWords[rnd.IntN(len(commonWords))] + " " + commonWords[rnd.IntN(len(commonWords))] + `"`}
		default:
			q = []string{words[rnd.IntN(len(words))], "--agent", agents[rnd.IntN(len(agents))]}
		}
		qs = append(qs, q)
	}
	var searches, grepped, beside, nothing []time.Duration
	var searchFaults, nothingFaults []int64
	for i, q := range qs {
		m, err := measure(dir, os.DevNull, os.DevNull, *bin, append([]string{"--repo", dir, "search"}, q...)...)
		if err != nil {
			return err
		}
		d := m.wall
		searches, searchFaults = append(searches, d), append(searchFaults, m.faults)
		// The reference: the same binary, started and doing nothing of its own.
		if m, err = measure(dir, os.DevNull, os.DevNull, *bin, "version"); err != nil {
			return err
		}
		nothing, nothingFaults = append(nothing, m.wall), append(nothingFaults, m.faults)
		if i < *greps {
			word := strings.Trim(q[0], `"`)
			g, err := run(dir, nil, nil, "sh", "-c", "git grep -c -F -e \"$1\" HEAD -- sessions >/dev/null; true", "sh", word)
			if err != nil {
				return err
			}
			grepped, beside = append(grepped, g), append(beside, d)
		}
	}
	p50, p99 := percentile(searches, .5), percentile(searches, .99)
	fmt.Printf("agmem search, %d queries, whole process: median %s, p99 %s\n", len(qs), ms(p50), ms(p99))
	fmt.Printf("  beside agmem version (the same binary doing nothing), run after each: median %s\n", ms(percentile(nothing, .5)))
	fmt.Printf("  page faults: median %d a search, %d agmem version (bench machine says what one costs)\n",
		percentile(searchFaults, .5), percentile(nothingFaults, .5))
	for _, kind := range slices.Compact(slices.Clone(kinds)) {
		var of []time.Duration
		for i, d := range searches {
			if kinds[i%len(kinds)] == kind {
				of = append(of, d)
			}
		}
		fmt.Printf("  %s: median %s, p99 %s\n", kind, ms(percentile(of, .5)), ms(percentile(of, .99)))
	}
	fmt.Printf("git grep of the same words (%d of them): median %s; agmem search of those: median %s\n",
		len(grepped), ms(percentile(grepped, .5)), ms(percentile(beside, .5)))
	row("search: agmem search p50", "≤ 30 ms", ms(p50), p50 <= 30*time.Millisecond)
	row("search: agmem search p99", "≤ 150 ms", ms(p99), p99 <= 150*time.Millisecond)
	faster := float64(percentile(grepped, .5)) / float64(percentile(beside, .5))
	row("search: faster than git grep", "≥ 20×", fmt.Sprintf("%.1f×", faster), faster >= 20)

	// agmem context as Claude Code's SessionStart hook, as agmem hooks install it:
	// agmem-record context when agmem-record is beside agmem, else agmem context.
	payload := []byte(`{"hook_event_name":"SessionStart","session_id":"bench-start","cwd":"/home/ana/shop","source":"startup"}`)
	hook := []string{*bin, "context"}
	if rec := filepath.Join(filepath.Dir(*bin), hooks.RecordBinary); fileExists(rec) {
		hook = []string{rec, "context"}
	}
	fmt.Printf("the context hook runs %s\n", strings.Join(hook, " "))
	var contexts []time.Duration
	for range 100 {
		d, err := run(dir, payload, nil, hook[0], hook[1], "--repo", dir, "--format", "claude")
		if err != nil {
			return err
		}
		contexts = append(contexts, d)
	}
	c50, c99 := percentile(contexts, .5), percentile(contexts, .99)
	fmt.Printf("agmem context as a SessionStart hook, 100 runs: median %s, p99 %s\n", ms(c50), ms(c99))
	row("search: agmem context p50", "≤ 30 ms", ms(c50), c50 <= 30*time.Millisecond)
	row("search: agmem context p99", "≤ 100 ms", ms(c99), c99 <= 100*time.Millisecond)

	// A search through a running MCP server.
	s, err := startMCP(dir, nil, *bin, "--repo", dir, "mcp", "serve")
	if err != nil {
		return err
	}
	var trips []time.Duration
	for i, q := range qs {
		req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
			"params": map[string]any{"name": "search", "arguments": map[string]any{"query": strings.Trim(q[0], `"`)}}})
		t0 := time.Now()
		answer, err := s.roundTrip(string(req))
		if err != nil || !bytes.Contains(answer, []byte(`"result"`)) {
			s.close()
			return fmt.Errorf("mcp search %d: %v %.200s", i, err, answer)
		}
		trips = append(trips, time.Since(t0))
	}
	s.close()
	m50 := percentile(trips, .5)
	fmt.Printf("agmem mcp serve, %d searches, round trip: median %s, p99 %s\n", len(trips), ms(m50), ms(percentile(trips, .99)))
	row("search: mcp search round trip p50", "≤ 10 ms", ms(m50), m50 <= 10*time.Millisecond)

	// The index's update after a flush of 1,000 observations, against the flush.
	return updateAfterFlush([]string{*bin}, dir, *rounds, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
}

// updateBench is updateAfterFlush on a memory repo of the caller's (one a search
// bench kept, say), which it adds sessions to; with -against, of two binaries in turn.
func updateBench(args []string) error {
	fs := flag.NewFlagSet("update", flag.ExitOnError)
	bin := fs.String("agmem", "agmem", "the agmem binary")
	against := fs.String("against", "", "another agmem binary, timed in turn with the first")
	repo := fs.String("repo", "", "the memory repo")
	rounds := fs.Int("rounds", 7, "flushes of each kind, of each binary")
	from := fs.String("from", "2026-12-01", "the day of the first flush's observations, a day later each flush: days new to the repo make runs alike")
	fs.Parse(args)
	if *repo == "" || *rounds < 1 {
		return fmt.Errorf("update needs -repo, and -rounds of 1 or more")
	}
	start, err := time.Parse(time.DateOnly, *from)
	if err != nil {
		return err
	}
	bins := []string{*bin}
	if *against != "" {
		bins = append(bins, *against)
	}
	return updateAfterFlush(bins, *repo, *rounds, start.Add(9*time.Hour))
}

// updateAfterFlush times what the index's update adds to a flush of 1,000
// observations (flush i's on day i after start, days the repo's year does not hold):
// a flush prints its commits before it updates the index, so the time from its last
// line to its end is the update's and the process's exit, and a flush stopped at that
// point (a failpoint) gives the exit's alone. Rounds of a stopped flush and a whole one,
// each binary's in turn; the update's cost is the difference of their medians, against
// the stopped flush's median time (timing the flushes whole, with the update and
// without, drowned it in their noise: a repo's flushes slow as it grows). After each
// stopped flush an agmem index catches the index up, timed too, and its own account of
// its update: what an update costs in a process of its own, as after a flush that
// died. The first binary's share is the row.
func updateAfterFlush(bins []string, dir string, rounds int, start time.Time) error {
	// A flush of one first, not timed: the first flush into a repo git checked out makes
	// git's index agmem's split one, once in the repo's life (BENCHMARKS.md, issue 21).
	first := `{"tool_name":"Read","session_id":"bench-first","tool_use_id":"first","cwd":"/home/ana/shop","arguments":{"file_path":"src/first.go"},"result":"` +
		strings.Repeat("the first flush into this repo ", 4) + `"}`
	if _, err := run(dir, []byte(first), nil, bins[0], "--repo", dir, "record"); err != nil {
		return err
	}
	if _, err := run(dir, nil, nil, bins[0], "--repo", dir, "flush", "--no-llm"); err != nil {
		return err
	}
	said := dir + ".index-said"
	defer os.Remove(said)
	nonce := fmt.Sprintf("%x", time.Now().UnixNano()) // sessions new to a kept repo too
	type times struct{ stopped, stoppedTail, wholeTail, alone, own []time.Duration }
	took := make([]times, len(bins))
	day := 0
	// flushOne records 1,000 observations and flushes them with bin, stopped before the
	// update or whole.
	flushOne := func(bin string, stop bool) (all, tail time.Duration, err error) {
		jsonl := thousand(fmt.Sprintf("bench-%s-%d", nonce, day), start.AddDate(0, 0, day))
		day++
		if _, err := run(dir, jsonl, nil, bin, "--repo", dir, "record", "--jsonl"); err != nil {
			return 0, 0, err
		}
		settle()
		if !stop {
			return runTail(dir, nil, bin, "--repo", dir, "flush", "--no-llm")
		}
		all, tail, err = runTail(dir, []string{"AGMEM_FAILPOINT=flush-before-index"}, bin, "--repo", dir, "flush", "--no-llm")
		// A failpoint kills with SIGKILL, or exits with 137 where there is none.
		if err == nil || !strings.Contains(err.Error(), "signal: killed") && !strings.Contains(err.Error(), "exit status 137") {
			return 0, 0, fmt.Errorf("the flush was not stopped before its index's update: %v", err)
		}
		return all, tail, nil
	}
	// stopped times a flush stopped before its update, then agmem index catching up.
	stopped := func(bin string, t *times) error {
		all, tail, err := flushOne(bin, true)
		if err != nil {
			return err
		}
		t.stopped, t.stoppedTail = append(t.stopped, all), append(t.stoppedTail, tail)
		m, err := measure(dir, os.DevNull, said, bin, "--repo", dir, "index")
		if err != nil {
			return err
		}
		own, err := updateTook(said)
		if err != nil {
			return err
		}
		t.alone, t.own = append(t.alone, m.wall), append(t.own, own)
		return nil
	}
	// The binaries take turns, and a binary's stopped and whole flushes too, in an
	// order drawn anew each round: every update adds a segment, and every 8th merges
	// them, which a fixed order would give to one binary's same kind of update.
	rnd := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 5))
	for range rounds {
		for _, b := range rnd.Perm(len(bins)) {
			bin, t := bins[b], &took[b]
			wholeFirst := rnd.IntN(2) == 0
			if !wholeFirst {
				if err := stopped(bin, t); err != nil {
					return err
				}
			}
			_, tail, err := flushOne(bin, false)
			if err != nil {
				return err
			}
			t.wholeTail = append(t.wholeTail, tail)
			if wholeFirst {
				if err := stopped(bin, t); err != nil {
					return err
				}
			}
		}
	}
	var share float64
	for b, t := range took {
		flush, update := percentile(t.stopped, .5), percentile(t.wholeTail, .5)-percentile(t.stoppedTail, .5)
		if b == 0 {
			share = float64(update) / float64(flush)
		}
		fmt.Printf("%s: flushes of 1,000 observations, %d of each: stopped before the index's update, median %s; from the last commit printed to the end, median %s whole and %s stopped: the update adds %s (%.0f%%)\n",
			bins[b], rounds, ms(flush), ms(percentile(t.wholeTail, .5)), ms(percentile(t.stoppedTail, .5)), ms(update), 100*float64(update)/float64(flush))
		fmt.Printf("%s: the same update as agmem index after a stopped flush: %s in its process, %s whole (medians)\n",
			bins[b], ms(percentile(t.own, .5)), ms(percentile(t.alone, .5)))
	}
	row("search: index update ÷ its flush of 1,000", "≤ 10%", fmt.Sprintf("%.0f%%", 100*share), share <= 0.10)
	return nil
}

// runTail times one process, and how long it ran after the last line it printed; one
// that says anything on stderr failed.
func runTail(dir string, env []string, name string, args ...string) (all, tail time.Duration, err error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, err
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	last := start
	for lines := bufio.NewScanner(out); lines.Scan(); {
		last = time.Now()
	}
	err = cmd.Wait()
	end := time.Now()
	if err == nil && errb.Len() > 0 { // a warning: a flush whose update failed, say
		err = errors.New("said on stderr")
	}
	if err != nil {
		err = fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, errb.String())
	}
	return end.Sub(start), end.Sub(last), err
}

// thousand is the JSONL of 1,000 reads of one session, a second apart from start.
func thousand(session string, start time.Time) []byte {
	var jsonl bytes.Buffer
	for i := range 1000 {
		fmt.Fprintf(&jsonl, `{"tool_name":"Read","session_id":%q,"tool_use_id":"%s-%d","timestamp":%q,"cwd":"/home/ana/shop","source":"claude-code","arguments":{"file_path":"src/new-%d.go"},"result":%q}`+"\n",
			session, session, i, start.Add(time.Duration(i)*time.Second).Format(time.RFC3339), i,
			strings.Repeat(commonWords[i%len(commonWords)]+" and more of a result ", 40))
	}
	return jsonl.Bytes()
}

// updateTook reads how long agmem index said its update took.
func updateTook(said string) (time.Duration, error) {
	out, err := os.ReadFile(said)
	if err != nil {
		return 0, err
	}
	m := regexp.MustCompile(`entries of \d+ commits in (\S+)`).FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("agmem index said %q", out)
	}
	return time.ParseDuration(string(m[1]))
}

// commonWords are words most observations of Go source hold.
var commonWords = []string{"func", "return", "error", "err", "nil", "string", "if", "for", "the", "type", "int", "package"}

var agents = []string{"claude-code", "codex", "gemini-cli"}

// makeYear fills repo with n observations in sessions of perSession each, one commit
// per session holding its session record and each observation's markdown file, in
// agmem's layout, as a flush writes them, then packs it as agmem gc packs a user's repo.
// It returns the bytes of text the index will hold and a few rare words of it.
func makeYear(bin, repo string, n, perSession int) (text int64, rare []string, err error) {
	pieces, err := sourcePieces(min(n, 100000), 1000)
	if err != nil {
		return 0, nil, err
	}
	projects := []string{"/home/ana/shop", "/home/ana/blog", "/home/ben/ledger", "/home/ben/infra"}
	tools := []struct{ name, kind, key string }{{"Read", "semantic", "file_path"}, {"Bash", "episodic", "command"},
		{"Edit", "episodic", "file_path"}, {"grep_search", "semantic", "pattern"}}
	imp := exec.Command("git", "fast-import", "--quiet")
	imp.Dir = repo
	in, err := imp.StdinPipe()
	if err != nil {
		return 0, nil, err
	}
	if err := imp.Start(); err != nil {
		return 0, nil, err
	}
	year := time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)
	sessions := n / perSession
	var record, files bytes.Buffer // a session's record, and its markdown files as fast-import takes them
	for s := range sessions {
		id := fmt.Sprintf("bench-%05d", s)
		agent, cwd := agents[s%len(agents)], projects[s%len(projects)]
		at := year.Add(time.Duration(s) * 365 * 24 * time.Hour / time.Duration(sessions))
		record.Reset()
		files.Reset()
		for i := range perSession {
			k := s*perSession + i
			p := pieces[k%len(pieces)]
			t := tools[k%len(tools)]
			when := at.Add(time.Duration(i) * 7 * time.Second)
			arg := p.path
			if t.key == "command" {
				arg = "go test ./" + filepath.Dir(p.path)
			}
			o := memory.Observation{ID: memory.IDOf(when, []byte(fmt.Sprint(k))), SessionID: id, Timestamp: when,
				ToolName: t.name, MemoryType: memory.Type(t.kind), Summary: t.name + " " + t.key + "=" + arg,
				Source: agent, Cwd: cwd, ToolUseID: fmt.Sprint("call-", i)}
			o.Arguments, _ = json.Marshal(map[string]string{t.key: arg})
			o.Result, _ = json.Marshal(p.text)
			line, _ := json.Marshal(memory.Entry{Observation: &o})
			record.Write(line)
			record.WriteByte('\n')
			md := render.Markdown(&o)
			fmt.Fprintf(&files, "M 100644 inline %s\ndata %d\n%s\n", render.Forms[0].Path(&o), len(md), md)
			text += int64(len(o.ToolName) + len(o.Summary) + len(o.Arguments) + len(p.text))
		}
		batch := memory.IDOf(at, []byte(id))
		fmt.Fprintf(in, "commit refs/heads/main\ncommitter bench <b@b> %d +0000\n", at.Unix())
		msg := fmt.Sprintf("Auto-commit: %d observations\n\nAgmem-Session: %s\nAgmem-Observations: %d\nAgmem-Batch: %s\nAgmem-Auto-Commit: true\n",
			perSession, id, perSession, batch)
		fmt.Fprintf(in, "data %d\n%s", len(msg), msg)
		if s == 0 {
			fmt.Fprintf(in, "from refs/heads/main^0\n")
			layout := render.Layout2.File()
			fmt.Fprintf(in, "M 100644 inline %s\ndata %d\n%s\n", render.LayoutFile, len(layout), layout)
		}
		fmt.Fprintf(in, "M 100644 inline %s\ndata %d\n", render.Layout2.SessionRecordPath(id, batch), record.Len())
		in.Write(record.Bytes())
		in.Write([]byte("\n"))
		in.Write(files.Bytes())
	}
	in.Close()
	if err := imp.Wait(); err != nil {
		return 0, nil, fmt.Errorf("fast-import: %w", err)
	}
	rare = rareWords(pieces, 50)
	co := exec.Command("git", "checkout", "-q", "-f", "main")
	co.Dir = repo
	if out, err := co.CombinedOutput(); err != nil {
		return 0, nil, fmt.Errorf("checkout: %v: %s", err, out)
	}
	if _, err := run(repo, nil, nil, bin, "--repo", repo, "gc"); err != nil {
		return 0, nil, err
	}
	// fast-import made each blob a delta against the one before it in its stream, and
	// git gc leaves a repo of one pack as it is. A user's repo holds a pack of whole
	// objects per flush, in which git gc looks for each one's most similar base: so
	// does this repack (BENCHMARKS.md, stop 39).
	_, err = run(repo, nil, nil, "git", "repack", "-a", "-d", "-f", "-q")
	return text, rare, err
}

// rareWords are up to n words of at least 6 letters that only one of pieces holds,
// spread over them.
func rareWords(pieces []piece, n int) []string {
	in := map[string]int{} // word: the piece it was first seen in, or -1 for more than one
	var order []string
	for i, p := range pieces {
		for _, w := range strings.FieldsFunc(p.text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			w = strings.ToLower(w)
			switch first, seen := in[w]; {
			case !seen:
				in[w] = i
				order = append(order, w)
			case first != i:
				in[w] = -1
			}
		}
	}
	var all []string
	for _, w := range order {
		if in[w] >= 0 && len(w) >= 6 {
			all = append(all, w)
		}
	}
	var rare []string
	for i := 0; i < len(all) && len(rare) < n; i += max(1, len(all)/n) {
		rare = append(rare, all[i]) // spread over the pieces
	}
	return rare
}

func dirSize(dir string) int64 {
	files, _ := os.ReadDir(dir)
	var n int64
	for _, f := range files {
		n += fileSize(filepath.Join(dir, f.Name()))
	}
	return n
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
