// Command soak simulates a year of agent work in one memory repo on an accelerated
// clock, and says what the repo costs month by month. It is a benchmark, not a test
// (its short form, TestShortSoak, checks the same invariants in CI):
//
//	scripts/soak.sh [-days 365] [-observations 1000000] [-sessions 5000] [-png docs/soak-year.png]
//
// Each simulated day, three agents' sessions of that day (timestamps in the input) are
// recorded with one agmem record --jsonl; the agmem daemon, running throughout, flushes
// them and pushes to a bare remote, and the next day starts when both are done; each
// simulated month ends with agmem gc. It prints, per month, the daemon's flush and push
// p50 and p99 (from its log), the journal's bytes after
// gc, .git's bytes, the files in the worktree and the largest directory agmem wrote;
// at the end it checks that agmem verify and git fsck --strict are clean, that every
// observation is in exactly one commit, that replay of 100 random sessions gives what
// was recorded, and that a fresh clone's pull replays one of them too; and it times
// agmem status, agmem sessions and git status against a process that does nothing.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agmem/agmem/memory"
)

func main() {
	var c config
	flag.StringVar(&c.agmem, "agmem", "", "the agmem binary")
	flag.IntVar(&c.days, "days", 365, "simulated days")
	flag.IntVar(&c.observations, "observations", 1000000, "observations in all")
	flag.IntVar(&c.sessions, "sessions", 5000, "sessions in all")
	flag.StringVar(&c.work, "work", "", "directory to work in (default: a new temporary one, removed after)")
	flag.StringVar(&c.png, "png", "", "write the plot here")
	replot := flag.String("replot", "", "only make the plot (-png) again, from the table of an earlier run's output in this file")
	flag.Parse()
	if *replot != "" {
		months, err := readTable(*replot)
		if err == nil && c.png == "" {
			err = errors.New("-replot needs -png FILE, where the plot goes")
		}
		if err == nil {
			err = plot(months, c.png)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "soak:", err)
			os.Exit(1)
		}
		return
	}
	if c.agmem == "" {
		fmt.Fprintln(os.Stderr, "soak: -agmem BINARY is required (go build -o /tmp/agmem .)")
		os.Exit(1)
	}
	if _, err := run(c, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

type config struct {
	agmem                        string
	days, observations, sessions int
	work, png                    string
}

// month is what one simulated month left.
type month struct {
	n                  int
	observations       int           // recorded so far
	flushP50, flushP99 time.Duration // as the daemon logs them
	pushP50, pushP99   time.Duration
	flushes            int
	journal, git       int64
	files, largestDir  int
	largestName        string
	wall               time.Duration // real time the month took
}

type result struct {
	months []month
}

var agents = []string{"claude-code", "codex", "gemini-cli"}

// session is one simulated session: what was recorded of it, in order.
type session struct {
	id    string
	agent string
	ids   []string
}

func run(c config, out *os.File) (*result, error) {
	abs, err := filepath.Abs(c.agmem)
	if err != nil {
		return nil, err
	}
	c.agmem = abs
	if c.work == "" {
		if c.work, err = os.MkdirTemp("", "agmem-soak-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(c.work)
	}
	s := &soak{c: c, mem: filepath.Join(c.work, "mem"), remote: filepath.Join(c.work, "remote.git")}
	if err := s.setUp(); err != nil {
		return nil, err
	}
	daemon, err := s.startDaemon()
	if err != nil {
		return nil, err
	}
	defer daemon.Process.Kill()

	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(1, 2))
	perSession := max(1, c.observations/c.sessions)
	sessionsPerDay := float64(c.sessions) / float64(c.days)
	var res result
	var logOffset int64
	monthStart := time.Now()
	made := 0.0
	fmt.Fprintf(out, "| month | observations | flush p50 | flush p99 | flushes | push p50 | push p99 | journal after gc | .git | worktree files | largest dir agmem wrote | wall time |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|\n")
	for day := range c.days {
		made += sessionsPerDay
		var lines bytes.Buffer
		for ; made >= 1 && s.recorded < c.observations; made-- {
			s.newSession(&lines, rng, start.AddDate(0, 0, day), min(perSession, c.observations-s.recorded))
		}
		if err := s.record(lines.Bytes()); err != nil {
			return nil, err
		}
		if err := s.waitSettled(); err != nil {
			return nil, err
		}
		if (day+1)%30 == 0 || day == c.days-1 {
			if _, err := s.agmem("gc"); err != nil {
				return nil, err
			}
			m := month{n: len(res.months) + 1, observations: s.recorded, wall: time.Since(monthStart)}
			flushes, pushes, next, err := logTimes(filepath.Join(s.mem, ".agmem", "daemon.log"), logOffset)
			if err != nil {
				return nil, err
			}
			logOffset = next
			m.flushes = len(flushes)
			m.flushP50, m.flushP99 = percentile(flushes, 50), percentile(flushes, 99)
			m.pushP50, m.pushP99 = percentile(pushes, 50), percentile(pushes, 99)
			if err := s.measure(&m); err != nil {
				return nil, err
			}
			res.months = append(res.months, m)
			fmt.Fprintf(out, "| %d | %d | %s | %s | %d | %s | %s | %s | %s | %d | %d (%s) | %s |\n", m.n, m.observations, ms(m.flushP50), ms(m.flushP99),
				m.flushes, ms(m.pushP50), ms(m.pushP99), mib(m.journal), mib(m.git), m.files, m.largestDir, m.largestName, m.wall.Round(time.Second))
			monthStart = time.Now()
		}
	}
	// The year's picture, whatever the checks find.
	if c.png != "" {
		if err := plot(res.months, c.png); err != nil {
			return nil, err
		}
	}
	daemon.Process.Signal(syscall.SIGTERM)
	if err := waitBounded(daemon, time.Minute); err != nil {
		return nil, fmt.Errorf("the daemon did not stop: %w", err)
	}
	return &res, s.check(out, rng)
}

type soak struct {
	c           config
	mem, remote string
	sessions    []*session
	recorded    int
}

func (s *soak) setUp() error {
	if _, err := s.agmem("init", s.mem); err != nil {
		return err
	}
	if err := run1("git", "init", "-q", "--bare", s.remote); err != nil {
		return err
	}
	if err := run1("git", "-C", s.mem, "remote", "add", "origin", s.remote); err != nil {
		return err
	}
	// One log, no rotation: its "flushed" lines are the flush times.
	return os.WriteFile(filepath.Join(s.mem, ".agmem", "config.toml"), []byte("[daemon]\nlog_max_bytes = 1073741824\n"), 0o644)
}

func (s *soak) startDaemon() (*exec.Cmd, error) {
	cmd := exec.Command(s.c.agmem, "--repo", s.mem, "daemon", "run", "--interval", "1h", "--max-pending", "1", "--push", "origin")
	cmd.Env = soakEnv()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return cmd, nil
}

// newSession writes the lines of a new session of n observations on day.
func (s *soak) newSession(w *bytes.Buffer, rng *rand.Rand, day time.Time, n int) {
	sess := &session{id: fmt.Sprintf("s%05d-%s", len(s.sessions), memory.NewID(day)[:10]), agent: agents[len(s.sessions)%len(agents)]}
	at := day.Add(time.Duration(rng.IntN(20*3600)) * time.Second)
	for i := range n {
		at = at.Add(time.Duration(1+rng.IntN(20)) * time.Second)
		id := memory.NewID(at)
		typ, tool, arg := "episodic", "Bash", fmt.Sprintf(`{"command":"go test ./pkg%d/..."}`, rng.IntN(50))
		switch i % 5 {
		case 1, 3:
			typ, tool, arg = "semantic", "Read", fmt.Sprintf(`{"file_path":"/src/app/pkg%d/file%d.go"}`, rng.IntN(50), rng.IntN(400))
		case 4:
			typ, tool, arg = "procedural", "TodoWrite", `{"todos":[{"content":"write the tests first","status":"pending"}]}`
		}
		fmt.Fprintf(w, `{"id":%q,"session_id":%q,"source":%q,"memory_type":%q,"tool_name":%q,"timestamp":%q,"arguments":%s,"result":"ok: %d lines of output from %s, the %dth call of the session, nothing failed"}`+"\n",
			id, sess.id, sess.agent, typ, tool, at.Format(time.RFC3339Nano), arg, rng.IntN(9000), tool, i)
		sess.ids = append(sess.ids, id)
	}
	s.sessions = append(s.sessions, sess)
	s.recorded += n
}

func (s *soak) record(lines []byte) error {
	if len(lines) == 0 {
		return nil
	}
	cmd := exec.Command(s.c.agmem, "--repo", s.mem, "record", "--jsonl")
	cmd.Env, cmd.Stdin = soakEnv(), bytes.NewReader(lines)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("record: %v: %s", err, lastLine(out))
	}
	return nil
}

// waitSettled waits, bounded, for the daemon to have flushed everything and pushed it:
// a day's flush then never waits for the last day's push, and its time is its own.
func (s *soak) waitSettled() error {
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		out, err := s.agmem("status", "--json")
		if err != nil {
			return err
		}
		var st struct {
			Pending int `json:"pending_observations"`
		}
		if err := json.Unmarshal(out, &st); err != nil {
			return err
		}
		if st.Pending == 0 {
			head, err := s.gitOut("rev-parse", "HEAD")
			if err != nil {
				return err
			}
			pushed, _ := exec.Command("git", "-C", s.remote, "for-each-ref", "--format=%(objectname)", "refs/heads/agents/").Output()
			if bytes.Equal(bytes.TrimSpace(pushed), bytes.TrimSpace(head)) {
				return nil
			}
		}
		// Seldom enough not to slow the flush it waits for.
		time.Sleep(250 * time.Millisecond)
	}
	return errors.New("the daemon left observations pending or unpushed for 5 minutes")
}

// measure fills in what the repo holds at the end of a month.
func (s *soak) measure(m *month) error {
	fi, err := os.Stat(filepath.Join(s.mem, ".agmem", "journal.db"))
	if err != nil {
		return err
	}
	m.journal = fi.Size()
	if m.git, err = dirBytes(filepath.Join(s.mem, ".git")); err != nil {
		return err
	}
	files, err := s.gitOut("ls-files", "-z")
	if err != nil {
		return err
	}
	entries := map[string]map[string]bool{} // directory → its entries
	for _, f := range strings.Split(strings.TrimSuffix(string(files), "\x00"), "\x00") {
		m.files++
		for dir, name := filepath.Dir(f), filepath.Base(f); ; dir, name = filepath.Dir(dir), filepath.Base(dir) {
			if entries[dir] == nil {
				entries[dir] = map[string]bool{}
			}
			entries[dir][name] = true
			if dir == "." {
				break
			}
		}
	}
	for dir, names := range entries {
		if len(names) > m.largestDir && (strings.HasPrefix(dir, "current") || strings.HasPrefix(dir, "sessions")) {
			m.largestDir, m.largestName = len(names), dir
		}
	}
	return nil
}

// check is the end of the soak: what must hold after a year.
func (s *soak) check(out *os.File, rng *rand.Rand) error {
	if o, err := s.agmem("verify"); err != nil {
		return fmt.Errorf("agmem verify: %v: %s", err, o)
	}
	if err := run1("git", "-C", s.mem, "fsck", "--strict", "--no-progress"); err != nil {
		return fmt.Errorf("git fsck --strict: %w", err)
	}
	if st, err := s.gitOut("status", "--porcelain"); err != nil || len(st) > 0 {
		return fmt.Errorf("git status is not clean: %v %s", err, st)
	}
	// Every observation in exactly one commit: the trailers add up, and each id is in
	// one markdown file and one record line.
	trailers, err := s.gitOut("log", "--format=%(trailers:key=Agmem-Observations,valueonly)")
	if err != nil {
		return err
	}
	total := 0
	for _, f := range strings.Fields(string(trailers)) {
		n, _ := strconv.Atoi(f)
		total += n
	}
	markdown, err := s.gitOut("grep", "-h", "--no-color", "^observation_id:", "HEAD", "--", "current")
	if err != nil {
		return err
	}
	inMarkdown := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(markdown)), "\n") {
		inMarkdown[strings.Trim(strings.TrimPrefix(l, "observation_id: "), `"`)]++
	}
	for _, sess := range s.sessions {
		for _, id := range sess.ids {
			if inMarkdown[id] != 1 {
				return fmt.Errorf("observation %s of session %s is in %d markdown files", id, sess.id, inMarkdown[id])
			}
		}
	}
	if total != s.recorded || len(inMarkdown) != s.recorded {
		return fmt.Errorf("recorded %d observations; the trailers count %d, markdown files hold %d", s.recorded, total, len(inMarkdown))
	}
	// Replay of 100 random sessions gives what was recorded, in order.
	for range min(100, len(s.sessions)) {
		sess := s.sessions[rng.IntN(len(s.sessions))]
		if err := s.replays(s.mem, sess); err != nil {
			return err
		}
	}
	// A fresh clone pulls the history from the remote and replays a session too.
	clone := filepath.Join(s.c.work, "clone")
	if _, err := s.agmem("init", clone); err != nil {
		return err
	}
	if err := run1("git", "-C", clone, "remote", "add", "origin", s.remote); err != nil {
		return err
	}
	// The first pull fetches the whole year, on the default settings: a first pull is not
	// held to [sync] timeout, which bounds a push or pull of a day's work.
	pull := exec.Command(s.c.agmem, "--repo", clone, "pull")
	pull.Env = soakEnv()
	t0 := time.Now()
	if o, err := pull.CombinedOutput(); err != nil {
		return fmt.Errorf("pull into a fresh clone: %v: %s", err, o)
	}
	fmt.Fprintf(out, "\na fresh clone's first pull of the year: %s\n", time.Since(t0).Round(time.Second))
	if err := s.replays(clone, s.sessions[rng.IntN(len(s.sessions))]); err != nil {
		return fmt.Errorf("in a fresh clone: %w", err)
	}
	fmt.Fprintf(out, "\nend: agmem verify clean, git fsck --strict clean, git status clean; %d observations, each in exactly one commit; replay of 100 random sessions and a fresh clone's pull and replay as recorded\n", s.recorded)
	return s.timings(out)
}

// replays checks that replay of sess in repo gives its observations, in order.
func (s *soak) replays(repo string, sess *session) error {
	cmd := exec.Command(s.c.agmem, "--repo", repo, "replay", "--json", "--session", sess.id)
	cmd.Env = soakEnv()
	o, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("replay %s: %w", sess.id, err)
	}
	var got []string
	sc := bufio.NewScanner(bytes.NewReader(o))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var e struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return fmt.Errorf("replay %s: %w", sess.id, err)
		}
		got = append(got, e.ID)
	}
	if !slices.Equal(got, sess.ids) {
		return fmt.Errorf("replay %s gives %d entries, not the %d recorded, in order", sess.id, len(got), len(sess.ids))
	}
	return nil
}

// timings times what a person runs on the year's repo, the median of 7 runs each,
// beside a process that does nothing, timed in the same loop.
func (s *soak) timings(out *os.File) error {
	cmds := []struct {
		name string
		args []string
	}{
		{"/bin/true", []string{"/bin/true"}},
		{"agmem status", []string{s.c.agmem, "--repo", s.mem, "status"}},
		{"agmem sessions", []string{s.c.agmem, "--repo", s.mem, "sessions"}},
		{"git status", []string{"git", "-C", s.mem, "status", "--porcelain"}},
	}
	times := make([][]time.Duration, len(cmds))
	for range 7 {
		for i, c := range cmds {
			t0 := time.Now()
			cmd := exec.Command(c.args[0], c.args[1:]...)
			cmd.Env = soakEnv()
			if o, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("%s: %v: %s", c.name, err, lastLine(o))
			}
			times[i] = append(times[i], time.Since(t0))
		}
	}
	fmt.Fprintf(out, "\n| command, on the year's repo | median of 7 | less /bin/true |\n|---|---:|---:|\n")
	base := percentile(times[0], 50)
	for i, c := range cmds {
		p := percentile(times[i], 50)
		fmt.Fprintf(out, "| `%s` | %s | %s |\n", c.name, ms(p), ms(p-base))
	}
	return nil
}

func (s *soak) agmem(args ...string) ([]byte, error) {
	if args[0] != "init" {
		args = append([]string{"--repo", s.mem}, args...)
	}
	cmd := exec.Command(s.c.agmem, args...)
	cmd.Env = soakEnv()
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return out, fmt.Errorf("agmem %s: %v: %s", strings.Join(args, " "), err, lastLine(ee.Stderr))
		}
		return out, fmt.Errorf("agmem %s: %w", strings.Join(args, " "), err)
	}
	return out, nil
}

func (s *soak) gitOut(args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-C", s.mem}, args...)...)
	cmd.Env = soakEnv()
	return cmd.Output()
}

// soakEnv keeps the person's configuration and keys out: commits by a fixed name, no
// model asked, no signing.
func soakEnv() []string {
	return append(os.Environ(), "GIT_AUTHOR_NAME=soak", "GIT_AUTHOR_EMAIL=soak@localhost", "GIT_COMMITTER_NAME=soak",
		"GIT_COMMITTER_EMAIL=soak@localhost", "GIT_CONFIG_GLOBAL=/dev/null", "AGMEM_REPO=", "AGMEM_SESSION=",
		"OPENAI_API_KEY=", "AGMEM_LLM_API_KEY=", "AGMEM_AUDIT_SIGN=off")
}

func run1(name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Env = soakEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, lastLine(out))
	}
	return nil
}

// logTimes reads the daemon log from offset on: how long each flush that committed
// took (its "flushed" lines), and each push that sent something ("pushed").
func logTimes(path string, offset int64) (flushes, pushes []time.Duration, next int64, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, offset, err
	}
	for _, l := range bytes.Split(data[offset:], []byte("\n")) {
		var e struct {
			Msg      string `json:"msg"`
			Commits  int    `json:"commits"`
			UpToDate bool   `json:"up_to_date"`
			Took     string `json:"took"`
		}
		if json.Unmarshal(l, &e) != nil {
			continue
		}
		d, err := time.ParseDuration(e.Took)
		switch {
		case err != nil:
		case e.Msg == "flushed" && e.Commits > 0:
			flushes = append(flushes, d)
		case e.Msg == "pushed" && !e.UpToDate:
			pushes = append(pushes, d)
		}
	}
	return flushes, pushes, int64(len(data)), nil
}

func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, (len(s)*p+99)/100-1)]
}

func dirBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n, err
}

func waitBounded(cmd *exec.Cmd, d time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		cmd.Process.Kill()
		return errors.New("killed after " + d.String())
	}
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
