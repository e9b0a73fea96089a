package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/daemon"
	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/internal/priority"
	"github.com/agmem/agmem/record"
)

func newDaemonCommand(e *env) *ucli.Command {
	var stopTimeout time.Duration
	var asJSON, print bool
	subcommands := []*ucli.Command{
		{
			Name:  "run",
			Usage: "run the daemon in the foreground, logging to stderr and .agmem/daemon.log",
			Description: "Flushes every --interval and as soon as --max-pending observations are pending, and\n" +
				"records the lines appended to each --watch file. SIGTERM or SIGINT: reads the watched\n" +
				"files a last time, flushes, exits. SIGHUP: reads .agmem/config.toml again.",
			Flags:  append(daemonFlags(), &ucli.BoolFlag{Name: "detached", Hidden: true}),
			Action: onRepo(e, func(c *ucli.Context, repo memrepo.Repo) error { return runDaemon(c, e, repo) }),
		},
		{
			Name:   "start",
			Usage:  "start the daemon in the background and print its pid",
			Flags:  daemonFlags(),
			Action: onRepo(e, func(c *ucli.Context, repo memrepo.Repo) error { return runDaemonStart(c, e, repo) }),
		},
		{
			Name:  "stop",
			Usage: "stop the daemon, after it flushed a last time",
			Flags: []ucli.Flag{repoFlag(), &ucli.DurationFlag{Name: "timeout", Destination: &stopTimeout,
				Usage: "wait this long for the final flush (default: [daemon] stop_timeout, 30s)"}},
			Action: onRepo(e, func(c *ucli.Context, repo memrepo.Repo) error {
				return runDaemonStop(e, repo, stopTimeout)
			}),
		},
		{
			Name:   "status",
			Usage:  "whether the daemon runs, what is pending, its last and next flush, its counters",
			Flags:  []ucli.Flag{repoFlag(), &ucli.BoolFlag{Name: "json", Usage: "one JSON document", Destination: &asJSON}},
			Action: onRepo(e, func(_ *ucli.Context, repo memrepo.Repo) error { return runDaemonStatus(e, repo, asJSON) }),
		},
		{
			Name:  "install",
			Usage: "run the daemon at login: a systemd user unit (Linux) or a launchd agent (macOS)",
			Flags: []ucli.Flag{repoFlag(), &ucli.BoolFlag{Name: "print", Destination: &print,
				Usage: "print the unit or agent instead of writing it"}},
			Action: onRepo(e, func(_ *ucli.Context, repo memrepo.Repo) error { return runDaemonInstall(e, repo, print) }),
		},
	}
	return &ucli.Command{
		Name:        "daemon",
		Usage:       "flush on a schedule and record watched files in the background: run, start, stop, status, install",
		Subcommands: subcommands,
		Action: func(c *ucli.Context) error {
			if c.Args().Present() {
				return hint.With(fmt.Errorf("unknown daemon command %q", c.Args().First()), `run "agmem daemon --help"`)
			}
			return ucli.ShowSubcommandHelp(c)
		},
	}
}

// daemonFlags are the settings of run and start; each wins over its [daemon] key.
func daemonFlags() []ucli.Flag {
	return []ucli.Flag{
		repoFlag(),
		&ucli.DurationFlag{Name: "interval", Usage: "flush this often, e.g. 30s or 5m (default: [daemon] interval, 5m)"},
		&ucli.IntFlag{Name: "max-pending", Usage: "flush as soon as this many observations are pending (default: [daemon] max_pending, 50)"},
		&ucli.StringSliceFlag{Name: "watch", Usage: "record each line appended to this JSONL file (repeatable; default: [daemon] watch)"},
		&ucli.DurationFlag{Name: "session-idle", Usage: "start a new session after this long without records (default: [capture] session_idle, 30m)"},
		&ucli.StringFlag{Name: "push", Usage: "push to this git remote after each flush (default: [sync] remote if [sync] push is true)"},
	}
}

// daemonFlagValues are the daemon's settings given as flags, which win over the
// configuration each time it is loaded.
type daemonFlagValues struct {
	interval, sessionIdle *time.Duration
	maxPending            *int
	watch                 []string // absolute
	push                  string   // the remote to push to, "" for [sync]'s choice
}

func readDaemonFlags(c *ucli.Context) (daemonFlagValues, error) {
	var f daemonFlagValues
	for _, d := range []struct {
		name string
		to   **time.Duration
	}{{"interval", &f.interval}, {"session-idle", &f.sessionIdle}} {
		if c.IsSet(d.name) {
			v := c.Duration(d.name)
			if v <= 0 {
				return f, hint.With(fmt.Errorf("--%s must be a positive duration", d.name), `e.g. --`+d.name+` 5m`)
			}
			*d.to = &v
		}
	}
	if c.IsSet("max-pending") {
		n := c.Int("max-pending")
		if n < 1 {
			return f, hint.With(errors.New("--max-pending must be 1 or more"), "e.g. --max-pending 50")
		}
		f.maxPending = &n
	}
	f.push = c.String("push")
	for _, w := range c.StringSlice("watch") {
		abs, err := filepath.Abs(w)
		if err != nil {
			return f, err
		}
		f.watch = append(f.watch, abs)
	}
	return f, nil
}

// args gives the flags again, for the daemon that start runs.
func (f daemonFlagValues) args() []string {
	var args []string
	if f.interval != nil {
		args = append(args, "--interval", f.interval.String())
	}
	if f.maxPending != nil {
		args = append(args, "--max-pending", fmt.Sprint(*f.maxPending))
	}
	if f.sessionIdle != nil {
		args = append(args, "--session-idle", f.sessionIdle.String())
	}
	for _, w := range f.watch {
		args = append(args, "--watch", w)
	}
	if f.push != "" {
		args = append(args, "--push", f.push)
	}
	return args
}

// loader resolves the daemon's settings as FORMAT.md §Config says: flags over the environment
// over .agmem/config.toml over the defaults. The daemon calls it again on SIGHUP.
func (f daemonFlagValues) loader(e *env, repo memrepo.Repo) func() (daemon.Settings, error) {
	return func() (daemon.Settings, error) {
		cfg, err := loadConfig(e, repo)
		if err != nil {
			return daemon.Settings{}, err
		}
		s := daemon.Settings{Interval: cfg.Daemon.Interval, MaxPending: cfg.Daemon.MaxPending}
		for _, w := range cfg.Daemon.Watch {
			if !filepath.IsAbs(w) {
				w = filepath.Join(repo.Root, w)
			}
			// One file followed once, however many ways it is named.
			if w = filepath.Clean(w); !slices.Contains(s.Watch, w) {
				s.Watch = append(s.Watch, w)
			}
		}
		s.Flush = flushSettings(cfg)
		s.Keep = cfg.Sync.KeepFor()
		if f.push != "" || cfg.Sync.Push {
			s.Push = syncOptions(cfg, f.push)
		}
		if f.interval != nil {
			s.Interval = *f.interval
		}
		if f.maxPending != nil {
			s.MaxPending = *f.maxPending
		}
		var idle time.Duration
		if f.sessionIdle != nil {
			idle = *f.sessionIdle
		}
		if s.Recorder, err = record.Open(repo.Root, record.Options{SessionIdle: idle, Getenv: e.getenv}); err != nil {
			return daemon.Settings{}, err
		}
		if f.watch != nil {
			s.Watch = f.watch
		}
		return s, nil
	}
}

func runDaemon(c *ucli.Context, e *env, repo memrepo.Repo) error {
	var notify *daemon.Notifier
	detached := c.Bool("detached")
	if detached {
		notify = daemon.Spawned()
	}
	err := serve(c, e, repo, detached, notify)
	if err != nil {
		notify.Failed(hint.OneLine(err.Error()), hint.For(err))
	}
	return err
}

// serve runs the daemon until SIGTERM or SIGINT; a second one ends it at once, which
// loses nothing either.
func serve(c *ucli.Context, e *env, repo memrepo.Repo, detached bool, notify *daemon.Notifier) error {
	priority.Yield()
	flags, err := readDaemonFlags(c)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(e, repo)
	if err != nil {
		return err
	}
	logFile, err := daemon.OpenLog(daemon.LogPath(repo.StateDir()), cfg.Daemon.LogMaxBytes)
	if err != nil {
		return err
	}
	defer logFile.Close()
	handlers := []slog.Handler{slog.NewJSONHandler(logFile, nil)}
	if !detached {
		handlers = append(handlers, slog.NewTextHandler(e.stderr, nil))
	}
	log := slog.New(slog.NewMultiHandler(handlers...))

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		stop()
	}()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	d := &daemon.Daemon{Repo: repo, Load: flags.loader(e, repo), Log: log}
	err = d.Run(ctx, hup, notify.Ready)
	var running *daemon.RunningError
	if errors.As(err, &running) {
		return hint.With(err, `"agmem daemon stop" stops it`)
	}
	if err != nil {
		log.Error("stopped", "error", err.Error())
		return hint.With(err, `nothing recorded is lost: "agmem flush" commits it`)
	}
	return nil
}

func runDaemonStart(c *ucli.Context, e *env, repo memrepo.Repo) error {
	if st, err := daemon.Probe(repo); err == nil {
		return hint.With(&daemon.RunningError{PID: st.PID}, `"agmem daemon stop" stops it`)
	} else if !errors.Is(err, daemon.ErrNotRunning) {
		return err
	}
	flags, err := readDaemonFlags(c)
	if err != nil {
		return err
	}
	// A bad setting is said here, not only in the daemon's log.
	if _, err := flags.loader(e, repo)(); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot tell where this agmem is: %w", err)
	}
	args := append([]string{"daemon", "run", "--detached", "--repo", repo.Root}, flags.args()...)
	pid, err := daemon.Start(repo, exe, args)
	var failed *daemon.StartError
	if errors.As(err, &failed) {
		return hint.With(err, failed.Hint)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "agmem daemon started: pid %d (log: %s)\n", pid, daemon.LogPath(repo.StateDir()))
	return nil
}

func runDaemonStop(e *env, repo memrepo.Repo, timeout time.Duration) error {
	if timeout <= 0 {
		cfg, err := loadConfig(e, repo)
		if err != nil {
			return err
		}
		timeout = cfg.Daemon.StopTimeout
	}
	st, err := daemon.Stop(repo, timeout)
	if errors.Is(err, daemon.ErrNotRunning) {
		fmt.Fprintln(e.stdout, "agmem daemon is not running")
		return nil
	}
	if err != nil {
		return hint.With(err, `it may still be flushing ("agmem daemon status"); kill -9 loses nothing recorded: "agmem flush" finishes`)
	}
	if st.Error != "" {
		return hint.With(fmt.Errorf("agmem daemon (pid %d) stopped, but %s", st.PID, st.Error),
			`nothing recorded is lost: "agmem flush" commits it`)
	}
	line := fmt.Sprintf("agmem daemon stopped: pid %d", st.PID)
	if f := st.LastFlush; f != nil && f.Trigger == "stop" {
		line += fmt.Sprintf("; its final flush committed %d observation(s) in %d commit(s)", f.Observations, f.Commits)
	}
	fmt.Fprintln(e.stdout, line)
	return nil
}

func runDaemonStatus(e *env, repo memrepo.Repo, asJSON bool) error {
	r, err := daemon.Status(repo)
	if err != nil {
		return err
	}
	if asJSON {
		out, _ := json.MarshalIndent(r, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", out)
		return nil
	}
	w := e.stdout
	if !r.Running {
		fmt.Fprintln(w, "daemon:     not running")
		fmt.Fprintf(w, "pending:    %d observations, %d events\n", r.Pending, r.PendingEvents)
		return nil
	}
	st := r.State
	fmt.Fprintf(w, "daemon:     running, pid %d, since %s\n", st.PID, localTime(&st.StartedAt))
	fmt.Fprintf(w, "flushes:    every %s, or at %d pending observations\n", st.Interval, st.MaxPending)
	fmt.Fprintf(w, "pending:    %d observations, %d events\n", r.Pending, r.PendingEvents)
	if f := st.LastFlush; f != nil {
		result := fmt.Sprintf("%d observation(s) in %d commit(s)", f.Observations, f.Commits)
		if f.Error != "" {
			result = "failed: " + hint.OneLine(f.Error)
		}
		fmt.Fprintf(w, "last flush: %s (%s): %s\n", localTime(&f.At), f.Trigger, result)
	} else {
		fmt.Fprintln(w, "last flush: none yet")
	}
	fmt.Fprintf(w, "next flush: %s\n", localTime(st.NextFlush))
	for _, ws := range st.Watch {
		problem := ""
		if ws.Problem != "" {
			problem = " (" + hint.OneLine(ws.Problem) + ")"
		}
		fmt.Fprintf(w, "watching:   %s at byte %d%s\n", hint.OneLine(ws.Path), ws.Offset, problem)
	}
	c := st.Counters
	fmt.Fprintf(w, "counters:   %d recorded from watched files; %d flushes (%d failed), %d commits, %d observations\n",
		c.Recorded, c.Flushes, c.Failed, c.Commits, c.Observations)
	return nil
}

func localTime(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Local().Format(time.DateTime)
}

func runDaemonInstall(e *env, repo memrepo.Repo, print bool) error {
	exe, err := agmemBinary()
	if err != nil {
		return err
	}
	home := e.getenv("HOME")
	if home == "" {
		return hint.With(errors.New("HOME is not set: agmem cannot tell where services are installed"), "set HOME")
	}
	svc, err := daemon.ServiceFor(runtime.GOOS, home, exe, repo.Root)
	if err != nil {
		return hint.With(err, `run "agmem daemon run --repo `+repo.Root+`" from your own service manager`)
	}
	if print {
		_, err := e.stdout.Write(svc.Content)
		return err
	}
	if err := os.MkdirAll(filepath.Dir(svc.Path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(svc.Path, svc.Content, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "wrote %s\nto start it now and at every login, run:\n", svc.Path)
	for _, cmd := range svc.Enable {
		fmt.Fprintf(e.stdout, "  %s\n", cmd)
	}
	return nil
}
