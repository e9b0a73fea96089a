// Package sessionstart owns the context hook: what "agmem context" is asked at a
// session's start (the project, the bound, the form, the hook's session), what it gives
// and records as given, and agmem-record's "context" command, which gives a block from
// the kept file (package sessionstart/kept) without opening the search index, and runs
// "agmem context" when the file cannot answer.
package sessionstart

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agmem/agmem/capture"
	"github.com/agmem/agmem/internal/config"
	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/record"
	"github.com/agmem/agmem/sessionstart/kept"
)

// Request is a context asked for: of which project, in what bound and form, and for
// which session, when a SessionStart hook asks.
type Request struct {
	Repo     memrepo.Repo
	Project  string // absolute
	MaxChars int
	Format   string // text, claude or json
	Hook     Hook
	// Off is [context] enabled = false: nothing is given.
	Off bool
	// Getenv reads the AGMEM_* settings the told block is recorded by.
	Getenv func(string) string
}

// Flags are what "agmem context" is told on its command line.
type Flags struct {
	Project, Format, Agent string
}

// Hook is what a context reads of a SessionStart hook payload on its stdin.
type Hook struct {
	Session, Cwd, Source string
}

// maxPayload bounds the hook payload read.
const maxPayload = 1 << 20

// payloadWait bounds how long a context waits for its payload. An agent writes it as
// it starts the hook, while a script that runs agmem context may leave stdin open and
// unwritten (a pipe it holds, a loop's input), which would hold the context, and an
// agent's start, for as long.
const payloadWait = time.Second

// ReadPayload reads a hook payload, if stdin holds one: a terminal is none, nor what
// is not one JSON value, nor a stdin that gives nothing within payloadWait. The value
// is read up to its end, not to stdin's: a writer that keeps stdin open past it holds
// nothing up.
func ReadPayload(stdin io.Reader) []byte {
	if f, ok := stdin.(*os.File); ok {
		if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice != 0 {
			return nil
		}
	}
	got := make(chan json.RawMessage, 1)
	go func() {
		var payload json.RawMessage
		if json.NewDecoder(io.LimitReader(stdin, maxPayload)).Decode(&payload) != nil {
			payload = nil
		}
		got <- payload
	}()
	select {
	case payload := <-got:
		return payload
	case <-time.After(payloadWait):
		return nil
	}
}

// Ask reads what is asked of "agmem context" in repo, configured by cfg: the project is
// f.Project, else the git worktree around the hook payload's cwd (else that cwd), else
// the git worktree around the working directory (else the directory), below the home
// directory: an agent started in a project's subdirectory is told of the project, as a
// person who runs agmem context there is. f.Agent reads the payload as that agent's.
func Ask(repo memrepo.Repo, cfg *config.Config, getenv func(string) string, f Flags, payload []byte) (Request, error) {
	format, agent, project := f.Format, f.Agent, f.Project
	switch format {
	case "text", "claude", "json":
	default:
		return Request{}, hint.With(fmt.Errorf("--format %q is none of text, claude, json", format), "e.g. --format claude, as a Claude Code hook")
	}
	if named, ok := capture.AgentNamed(agent); ok {
		agent = named
	} else if agent != "" {
		return Request{}, hint.With(fmt.Errorf("--agent %q is not an agent agmem reads hooks of", agent), "name one of claude, codex, gemini, cursor, or leave --agent out")
	}
	repo.LockUntil = time.Now().Add(StartLockWait)
	r := Request{Repo: repo, MaxChars: cfg.Context.MaxChars, Format: format, Hook: hookOf(payload, agent),
		Off: !cfg.Context.Enabled, Getenv: getenv}
	var err error
	if project == "" {
		// The payload's cwd is the directory as its agent records where it works; a
		// person's working directory is taken as agents take theirs (physical).
		if project = r.Hook.Cwd; project == "" {
			if project, err = os.Getwd(); err != nil {
				return r, err
			}
			project = physical(project)
		}
		if project, err = filepath.Abs(project); err != nil {
			return r, err
		}
		project = worktreeAround(project, getenv("HOME"))
	}
	// A project given is read as search reads it: the directory as named, and as its
	// links resolve (recall.projectDirs).
	r.Project, err = filepath.Abs(project)
	return r, err
}

// physical is dir with its links resolved, as agents record the directories they work
// in (their getcwd), where a shell's working directory may be a link to it ($PWD, as
// os.Getwd gives it, and so --project as typed there); dir itself where it cannot be
// resolved.
func physical(dir string) string {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return real
	}
	return dir
}

// hookOf reads a SessionStart hook payload; anything else is no hook.
func hookOf(payload []byte, agent string) Hook {
	if len(strings.TrimSpace(string(payload))) == 0 {
		return Hook{}
	}
	d, err := capture.Decode(payload, capture.Policy{Agent: agent}, time.Now())
	if err != nil {
		// A payload refused as input (a session id an older agmem took, that agmem
		// refuses now) still says where the session starts: its project's block is
		// given, and nothing is recorded in the session.
		var start struct {
			Event string `json:"hook_event_name"`
			Cwd   string `json:"cwd"`
		}
		if json.Unmarshal(payload, &start) == nil && start.Event == "SessionStart" {
			return Hook{Cwd: start.Cwd}
		}
		return Hook{}
	}
	if len(d.Entries) != 1 || d.Entries[0].Event == nil {
		return Hook{}
	}
	ev := d.Entries[0].Event
	return Hook{Session: ev.SessionID, Cwd: ev.Attrs["cwd"], Source: ev.Source}
}

// worktreeAround is the git worktree at or above dir (absolute), else dir. It looks no
// higher than below home, the home directory, as named or as links resolve it: a home
// that is a repository of its dotfiles is no project of every directory in it.
func worktreeAround(dir, home string) string {
	var homes []string
	if home != "" {
		homes = append(homes, filepath.Clean(home))
		if real, err := filepath.EvalSymlinks(home); err == nil {
			homes = append(homes, real)
		}
	}
	for d := dir; ; d = filepath.Dir(d) {
		if d != dir && slices.Contains(homes, d) {
			return dir
		}
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// GiveKept gives what r asks from the kept file, when it holds it still right, and
// says whether it did; nothing is asked when [context] is off. When the index is
// behind, it starts "agmem index" in the background with the agmem binary, so that the
// next start reads fewer events.
func (r Request) GiveKept(agmem string, stdout, stderr io.Writer) bool {
	if r.Off {
		return true
	}
	found, ok := kept.Lookup(r.Repo, r.Project, r.MaxChars)
	if !ok {
		return false
	}
	if found.Behind {
		IndexInBackground(agmem, r.Repo)
	}
	r.Give(stdout, stderr, found.Block)
	return true
}

// IndexInBackground starts "agmem index" with the agmem binary, which brings the index
// up to date for the next session, and does not wait for it; done is closed when it
// ends (nil when it could not start). It is given none of this process's files (Go's
// runtime opens /dev/null on its standard ones): an agent that waits for its hook's
// output to end does not wait for it. A process that lives on (the MCP server) reaps it
// when it ends, lest it stay a zombie as long.
func IndexInBackground(agmem string, repo memrepo.Repo) (done <-chan struct{}) {
	p, err := os.StartProcess(agmem, []string{agmem, "--repo", repo.Root, "index"}, &os.ProcAttr{Dir: repo.Root})
	if err != nil {
		return nil
	}
	ended := make(chan struct{})
	go func() {
		p.Wait()
		close(ended)
	}()
	return ended
}

// StartLockWait is how long the reads and writes of the journal a session's start makes
// wait for the journal's lock, all together (but memrepo.MinLockWait each), where
// others wait 10 s each: the agent waits on its context, and a flush holds the lock
// only for moments. Past it, the context is given from what the index holds, and what
// was given is kept aside for the journal's next write (journal.Append).
const StartLockWait = 300 * time.Millisecond

// Give prints block as r asks, and when a hook asked, records what the agent was told
// as an event of its session, with the ids it cited: replay shows what the agent knew
// when it started, and an audit can tell. A failure to record it is said on stderr,
// and does not keep the agent from its context. An empty block gives nothing.
func (r Request) Give(stdout, stderr io.Writer, block kept.Block) {
	if block.Text == "" {
		return
	}
	if r.Hook.Session != "" {
		rec, err := record.OpenRepo(r.Repo, record.Options{Getenv: r.Getenv}) // waiting what is left of StartLockWait, as Ask set it
		if err == nil {
			_, err = rec.Record(record.Event{Session: r.Hook.Session, Name: memory.ContextGiven, Text: block.Text,
				Source: r.Hook.Source, Attrs: map[string]string{"cwd": block.Project, "cited": strings.Join(block.Cited, " ")}})
		}
		if err != nil {
			err = fmt.Errorf("the context given was not recorded: %w", err)
			hint.Print(stderr, err, hint.For(err))
		}
	}
	switch r.Format {
	case "claude":
		out, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]string{
			"hookEventName": "SessionStart", "additionalContext": block.Text}})
		fmt.Fprintf(stdout, "%s\n", out)
	case "json":
		out, _ := json.Marshal(block)
		fmt.Fprintf(stdout, "%s\n", out)
	default:
		io.WriteString(stdout, block.Text)
	}
}
