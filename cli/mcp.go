package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/hooks"
	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/internal/shell"
	"github.com/agmem/agmem/mcp"
	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/record"
)

type mcpProxyOptions struct {
	name    string
	methods []string
	grace   time.Duration
}

func newMCPCommand(e *env) *ucli.Command {
	var o mcpProxyOptions
	proxy := &ucli.Command{
		Name:      "proxy",
		Usage:     "run a stdio MCP server behind agmem, which records every tool call made to it",
		ArgsUsage: "-- CMD [ARGS…]",
		Description: "Starts the MCP server CMD and relays the client's messages to it and its answers back,\n" +
			"unchanged; its stderr passes through. Each tools/call is recorded as mcp__NAME__<tool>\n" +
			"into one session per run ($AGMEM_SESSION, if set), through the same capture rules and\n" +
			"redaction as \"agmem record\". If nothing can be recorded, the server is relayed all the\n" +
			"same, and stderr says why. Exits as the server did (1 where it exited 2).\n\n" +
			"Example, in an MCP client's config: agmem mcp proxy -- npx -y @modelcontextprotocol/server-filesystem ~/src",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "name", Destination: &o.name,
				Usage: "the server's NAME in mcp__NAME__<tool> (default: the command's name, or the package npx, uvx, node, python… run)"},
			&ucli.StringSliceFlag{Name: "method", Usage: "also record requests of this method, e.g. resources/read or prompts/get (repeatable; \"*\": every request)"},
			&ucli.DurationFlag{Name: "grace", Value: 5 * time.Second, Destination: &o.grace,
				Usage: "once the client closes its input: how long to wait for the answers still due, then for the server to exit"},
			repoFlag(),
		},
		Action: func(c *ucli.Context) error {
			o.methods = c.StringSlice("method")
			return runMCPProxy(c, e, o, c.Args().Slice())
		},
	}
	return &ucli.Command{
		Name:        "mcp",
		Usage:       "record the tool calls of any MCP server (proxy), or serve the memory to agents (serve, install)",
		Subcommands: []*ucli.Command{proxy, newMCPServeCommand(e), newMCPInstallCommand(e), newMCPUninstallCommand(e)},
		Action: func(c *ucli.Context) error {
			if c.Args().Present() {
				return hint.With(fmt.Errorf("unknown mcp command %q", c.Args().First()), `run "agmem mcp --help"`)
			}
			return ucli.ShowSubcommandHelp(c)
		},
	}
}

// runMCPProxy relays between the client on stdin and stdout and the server command,
// recording its tool calls, and exits as the server did. Main knows only the exit codes
// 0 and 1, so any other code of the server's ends the process here, once every call is
// recorded. A server's 2 becomes 1: agent hook runners read 2 as "block", and agmem
// never exits 2, whatever runs it.
func runMCPProxy(c *ucli.Context, e *env, o mcpProxyOptions, command []string) error {
	if len(command) == 0 {
		return hint.With(errors.New("mcp proxy needs the server's command"),
			`e.g. "agmem mcp proxy -- npx -y @modelcontextprotocol/server-filesystem DIR"`)
	}
	name := mcp.ServerName(command[0], command[1:])
	if o.name != "" {
		name = mcp.SafeName(o.name)
	}
	p := &mcp.Proxy{Command: command[0], Args: command[1:], Stdin: e.stdin, Stdout: e.stdout, Stderr: e.stderr,
		Methods: o.methods, Grace: o.grace,
		Warn: func(err error) { report(e.stderr, fmt.Errorf("mcp proxy: %w", err)) }}
	rec, err := openMCPRecording(c, e, name)
	switch {
	case err != nil:
		report(e.stderr, fmt.Errorf("mcp proxy: not recording (the server runs all the same): %w", err))
	case rec != nil && geminiRecords(e, rec.repo):
		fmt.Fprintf(e.stderr, "agmem: mcp proxy: Gemini CLI's agmem hook records this server's calls into %s: the proxy leaves them to it\n", rec.repo)
	case rec != nil:
		p.Record, p.MaxMessage = rec.record, rec.rec.MaxInput()
	}

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(signals)
	p.Signals = signals
	defer failOnBrokenPipe()()

	state, err := p.Run()
	if err != nil {
		return hint.With(fmt.Errorf("mcp proxy: start %s: %w", command[0], err),
			"give the server's command after --, as you would run it yourself")
	}
	code := mcp.ExitCode(state)
	if code == 0 {
		return nil
	}
	ended := fmt.Errorf("mcp proxy: the server ended (%s)", state)
	switch code {
	case 1:
		return ended
	case 2:
		return hint.With(ended, `agmem exits 1 for it: agents read 2 as "block"`)
	}
	report(e.stderr, ended)
	os.Exit(code)
	return nil
}

// mcpRecording records the proxy's calls into a memory repo, all of a batch in one
// journal transaction, into one session per run.
type mcpRecording struct {
	rec    *record.Recorder
	repo   string // its root
	server string
	cwd    string
	// agentSession is the session of the agent that started the proxy, when it says:
	// Claude Code names it in its MCP servers' environment, and its calls' ids in their
	// requests, the ids its hooks record them by.
	agentSession string
}

// openMCPRecording finds the memory repo and its settings. It returns nil, nil when
// capture is switched off there or opted out of here.
func openMCPRecording(c *ucli.Context, e *env, server string) (*mcpRecording, error) {
	repo, err := openRepo(c, e)
	if err != nil {
		return nil, err
	}
	session := e.getenv("AGMEM_SESSION")
	if session == "" {
		session = memory.NewID(time.Now())
	} else if err := memory.CheckNewSessionID(session); err != nil {
		return nil, hint.With(fmt.Errorf("AGMEM_SESSION: %w", err), memory.SessionIDHint)
	}
	rec, err := record.Open(repo.Root, record.Options{Session: session, Getenv: e.getenv})
	if err != nil || rec.Off() != "" {
		return nil, err
	}
	cwd, _ := os.Getwd()
	return &mcpRecording{rec: rec, repo: repo.Root, server: server, cwd: cwd, agentSession: e.getenv("CLAUDE_CODE_SESSION_ID")}, nil
}

// geminiRecords says whether the proxy runs under Gemini CLI (which sets GEMINI_CLI=1 for
// its MCP servers) and agmem's AfterTool hook of Gemini records into repo, switched on
// and not disabled in either settings file (Gemini merges the two): that hook sees every
// MCP call, in Gemini's session, while Gemini's requests name nothing of a call the
// proxy could tell the hook's record of it by, so the proxy leaves the calls to the
// hook, and each is kept once. In doubt it says no: a call kept twice is better than
// one lost.
func geminiRecords(e *env, repo string) bool {
	if e.getenv("GEMINI_CLI") != "1" {
		return false
	}
	place, err := hooksPlace(e)
	if err != nil {
		return false
	}
	self, _ := os.Executable()
	records := false
	for _, a := range hooks.Agents {
		if a.Name != "gemini" {
			continue
		}
		for _, s := range []hooks.Scope{hooks.User, hooks.Project} {
			st := a.Status(place, s, self)
			src, err := os.ReadFile(st.Path)
			switch {
			case err != nil && !errors.Is(err, os.ErrNotExist), st.Error != "", a.Disabled(src),
				st.Switch != nil && st.Switch.State != hooks.SwitchOn && st.Switch.State != hooks.SwitchUnset:
				return false // off, disabled, or not to be read: the hook may not run
			}
			if slices.Contains(st.Events, "AfterTool") && slices.ContainsFunc(st.Recorders, func(r hooks.Recorder) bool { return sameDir(r.Repo, repo) }) {
				records = true
			}
		}
	}
	return records
}

// sameDir says whether two paths name one directory.
func sameDir(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(ia, ib)
}

// record records the calls the capture policy keeps, trying again a few times when the
// journal is busy (a long gc or import): the calls are dated, so their ids are the same
// each time (the id rule), and a write that committed but reported an error is kept
// once. A call the policy refuses is named in the error, and the others are recorded
// all the same.
func (r *mcpRecording) record(calls []mcp.Call) error {
	inputs := make([]record.Input, len(calls))
	for i, call := range calls {
		o := call.Observation(r.server)
		o.Cwd = r.cwd
		if o.ToolUseID != "" && o.Session == "" {
			o.Session = r.agentSession
		}
		if o.Session == "" || memory.CheckNewSessionID(o.Session) != nil {
			o.ToolUseID, o.Session = "", "" // the id alone names no call: the proxy's session keeps it
		}
		inputs[i] = o
	}
	var out record.Outcome
	var err error
	for wait := time.Second; wait <= 4*time.Second; wait *= 2 {
		if out, err = r.rec.Record(inputs...); err == nil {
			break
		}
		time.Sleep(wait)
	}
	return errors.Join(append(out.Refused, err)...)
}

func newMCPServeCommand(e *env) *ucli.Command {
	return &ucli.Command{
		Name:  "serve",
		Usage: "an MCP server of the memory, on stdio: search, timeline, get_observations, sessions",
		Description: "Read-only. Agents search first (one line per hit), then look at the timeline around a hit,\n" +
			"then fetch the observations they need whole; every item cites its commit and file. Add it\n" +
			"to an agent's MCP servers with \"agmem mcp install AGENT\".",
		Flags: []ucli.Flag{repoFlag()},
		Action: onRepo(e, func(_ *ucli.Context, repo memrepo.Repo) error {
			m, err := openLive(repo)
			if err != nil {
				return err
			}
			defer m.Close()
			srv := mcp.NewServer(m, Version)
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			defer failOnBrokenPipe()()
			err = srv.Run(ctx, io.NopCloser(e.stdin), nopCloser{e.stdout})
			if ctx.Err() != nil || errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}),
	}
}

// failOnBrokenPipe makes a write to a client that has gone fail, where Go's default for a
// broken stdout kills the process before it recorded what it had or closed what it
// opened; what it returns puts the default back.
func failOnBrokenPipe() (restore func()) {
	brokenPipe := make(chan os.Signal, 1)
	signal.Notify(brokenPipe, syscall.SIGPIPE)
	return func() { signal.Stop(brokenPipe) }
}

// nopCloser is a writer that a transport may close, leaving it open.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

func newMCPInstallCommand(e *env) *ucli.Command {
	agents := strings.Join(hooks.Names(), "|")
	return perAgent(e, &ucli.Command{
		Name:      "install",
		Usage:     "add agmem's MCP server of this memory repo to an agent's MCP servers",
		ArgsUsage: agents,
		Description: "Writes into the agent's user settings (~/.claude.json, ~/.codex/config.toml,\n" +
			"~/.gemini/settings.json, ~/.cursor/mcp.json), or with --scope project into the\n" +
			"current directory's (.mcp.json, .codex/config.toml, .gemini/settings.json,\n" +
			".cursor/mcp.json). The server is named agmem and runs \"agmem --repo REPO mcp serve\",\n" +
			"both absolute. Everything else in the file is kept byte for byte; the file as it was\n" +
			"before agmem first changed it is kept beside it as <file>.agmem-backup.",
	}, func() []ucli.Flag { return settingsFlags(true) }, "add agmem's MCP server for ", runMCPInstall)
}

func newMCPUninstallCommand(e *env) *ucli.Command {
	return perAgent(e, &ucli.Command{
		Name:      "uninstall",
		Usage:     "take agmem's MCP server out of an agent's MCP servers, and nothing else",
		ArgsUsage: strings.Join(hooks.Names(), "|"),
	}, func() []ucli.Flag { return settingsFlags(false) }, "take agmem's MCP server out for ", runMCPUninstall)
}

func runMCPInstall(c *ucli.Context, r agentRun) error {
	repo, err := openRepo(c, r.e)
	if errors.Is(err, memrepo.ErrNotFound) {
		return hint.With(fmt.Errorf("agmem's MCP server needs a memory repo to serve: %w", err),
			`run "agmem mcp install `+r.agent.Name+` --repo ~/agent-memory"`)
	}
	if err != nil {
		return err
	}
	plan, err := r.agent.PlanMCPInstall(r.place, r.scope, hooks.MCPServer{Binary: r.self, Repo: repo.Root})
	if err != nil {
		return r.unreadable(err)
	}
	if err := r.apply(plan); err != nil {
		return err
	}
	if !r.dryRun {
		fmt.Fprintf(r.e.stdout, "%s: its MCP server %q runs %s --repo %s mcp serve; it starts it with its next session\n",
			r.agent.Name, hooks.MCPServerName, shell.Quote(r.self), shell.Quote(repo.Root))
	}
	return nil
}

func runMCPUninstall(_ *ucli.Context, r agentRun) error {
	plan, err := r.agent.PlanMCPUninstall(r.place, r.scope)
	if err != nil {
		return r.unreadable(err)
	}
	return r.apply(plan)
}
