// Package gitsync owns how memory repos share their history through ordinary git
// remotes: agmem push and agmem pull.
//
// Each memory repo has an id (IDFile) and publishes its branch on a remote as
// refs/heads/agents/<id>, and writes nothing else there. No two repos ever update the
// same ref, so any number of them can push to one remote at the same moment and each
// push is a fast-forward of a branch only its own repo writes: nothing is rebuilt,
// nothing conflicts, and an observation committed once is on the remote once. Pull
// fetches every repo's branch into refs/remotes/<remote>/agents/<id>, where package
// history reads the sessions of every agent; it changes no branch of the repo's own.
//
// Promises:
//   - Push and pull hold the memory repo's writer lock (flush.Lock), as a flush does.
//   - They never change the repo's own branch, its worktree or its journal: a failed
//     push or pull loses nothing, and the next push sends whatever is not there yet.
//   - A failure says which remote, what went wrong, and what to do (Error.Hint).
//
// The talking to remotes is package vcs/transport's.
package gitsync

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/agmem/agmem/flush"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/internal/shell"
	"github.com/agmem/agmem/vcs"
	"github.com/agmem/agmem/vcs/transport"
)

// Options say which remote and how to reach it.
type Options struct {
	Remote string
	// Username and Password authenticate over http(s) (a token goes in Password); when
	// empty, a git credential helper is asked if the server wants credentials.
	Username, Password string
	SSHKey             string
	// Timeout bounds the whole exchange with the remote, but for a first push or pull
	// (WholeHistoryTimeout).
	Timeout time.Duration
	// Whole, when set, is told that the exchange moves a whole history (a first push
	// or pull), which may take minutes, once it has taken wholeNotice: on a goroutine
	// of its own, never after Push or Pull returns.
	Whole func()
}

// wholeNotice is how long an exchange that moves a whole history runs before Whole is
// told (0: at once): one that fails at once (no repository, a refusal) says only why.
var wholeNotice = 3 * time.Second

// WholeHistoryTimeout is the least bound on an exchange that moves a whole history: a
// pull from a remote none of whose agents branches this repo fetched before, a push
// of a branch the remote lacks. A year of 1,000,000 observations is 400 MB of git, and
// its first pull took over three minutes.
const WholeHistoryTimeout = 30 * time.Minute

// Pushed is what a push did.
type Pushed struct {
	Remote   string
	Branch   plumbing.ReferenceName // the repo's own branch
	As       plumbing.ReferenceName // where it is on the remote: refs/heads/agents/<id>
	Tip      plumbing.Hash          // zero when the branch has no commit yet
	UpToDate bool                   // the remote had it already (or there was nothing)
}

// Push publishes the repo's branch on the remote as refs/heads/agents/<repo id>, as a
// fast-forward. It makes the repo's id if it has none.
func Push(repo memrepo.Repo, opts Options) (Pushed, error) {
	p := Pushed{Remote: opts.Remote}
	git, err := vcs.Open(repo.Root)
	if err != nil {
		return p, err
	}
	if p.Branch, p.Tip, err = git.Head(); err != nil {
		return p, err
	}
	if p.Tip.IsZero() {
		p.UpToDate = true
		return p, nil
	}
	id, err := EnsureID(repo.StateDir(), repo.Root)
	if err != nil {
		return p, err
	}
	p.As = vcs.AgentBranch(id)
	upToDate, err := run(repo, git, transport.OpPush, opts, p.Branch.String()+":"+p.As.String(), false)
	var f *transport.Failure
	if errors.As(err, &f) {
		e := failed("push to", opts, git, f)
		if e.Kind == transport.KindDiverged {
			e.Hint = fmt.Sprintf("%s on %s has commits this branch lacks. This branch was moved back or rewritten "+
				"since it was pushed (a reset): \"agmem verify\" says whether it holds every observation, and then "+
				"git -C %s push --force %s %s:%s publishes it as it is. Or the branch there was rewritten: \"agmem pull\" "+
				"says so, and the same push puts this repo's back. Or another memory repo pushes as %q (a copy of this "+
				"one): remove .agmem/%s in the copy, then push from it again",
				p.As.Short(), opts.Remote, shell.Readable(repo.Root), shell.Readable(opts.Remote), p.Branch, p.As, id, IDFile)
		}
		return p, e
	}
	p.UpToDate = upToDate
	return p, err
}

// Update is a fetched branch that moved.
type Update struct {
	Name     string        // "origin/agents/<id>"
	Old, New plumbing.Hash // Old is zero for a branch fetched the first time, New for one the remote no longer has
	// Lost are the commits of the line Old ends that New's holds no more: a branch
	// rewritten on the remote (a commit dropped, the branch moved back); -1 when the
	// history could not be read to tell, which pull does not call rewritten.
	Lost int
}

// Pull fetches the branch of every memory repo published on the remote into
// refs/remotes/<remote>/agents/<id>, removes those the remote no longer has, and
// returns those that moved or went.
func Pull(repo memrepo.Repo, opts Options) ([]Update, error) {
	git, err := vcs.Open(repo.Root)
	if err != nil {
		return nil, err
	}
	before, err := git.FetchedAgents(opts.Remote)
	if err != nil {
		return nil, err
	}
	// A first pull brings every agent's whole history.
	_, err = run(repo, git, transport.OpFetch, opts, vcs.AgentsFetchSpec(opts.Remote), len(before) == 0)
	var f *transport.Failure
	if errors.As(err, &f) {
		return nil, failed("pull from", opts, git, f)
	}
	if err != nil {
		return nil, err
	}
	after, err := git.FetchedAgents(opts.Remote)
	if err != nil {
		return nil, err
	}
	was := map[string]plumbing.Hash{}
	for _, f := range before {
		was[f.Name()] = f.Tip
	}
	var moved []Update
	for _, f := range after {
		if old := was[f.Name()]; old != f.Tip {
			u := Update{Name: f.Name(), Old: old, New: f.Tip}
			if !old.IsZero() {
				u.Lost = lost(git, old, f.Tip)
			}
			moved = append(moved, u)
		}
		delete(was, f.Name())
	}
	for _, f := range before {
		if _, gone := was[f.Name()]; gone {
			moved = append(moved, Update{Name: f.Name(), Old: f.Tip})
		}
	}
	return moved, nil
}

// Standing is how the repo's branch stands to its copy on a remote, as the last push
// or pull there left the copy (refs/remotes/<remote>/agents/<id>): nothing is asked of
// the remote.
type Standing struct {
	Remote string `json:"remote"`
	Pushed bool   `json:"pushed"` // the branch has a copy there: it was pushed at least once
	// Ahead is how many commits of the branch's line the copy lacks; -1 when the
	// history could not be read to tell.
	Ahead int `json:"unpushed"`
	// Parted says the copy holds commits the branch lacks (the branch moved back here,
	// or rewritten there): a push is refused until one of them is put right.
	Parted bool `json:"parted,omitempty"`
}

// StandingOn is how the repo's branch stands to its copy on remote.
func StandingOn(repo memrepo.Repo, git *vcs.Git, remote string) (Standing, error) {
	s := Standing{Remote: remote}
	id, err := readID(repo.StateDir())
	if err != nil || id == "" {
		return s, err
	}
	_, tip, err := git.Head()
	if err != nil {
		return s, err
	}
	fetched, err := git.FetchedAgents(remote)
	if err != nil {
		return s, err
	}
	for _, f := range fetched {
		if f.ID != id {
			continue
		}
		s.Pushed = true
		// A branch moved on since its push, the common case, is told without walking a
		// year's history both ways (0.2 s).
		if n, ok := git.StepsBack(tip, f.Tip, 1000); ok {
			s.Ahead = n
		} else {
			s.Ahead, s.Parted = lost(git, tip, f.Tip), lost(git, f.Tip, tip) > 0
		}
	}
	return s, nil
}

// lost counts the commits of the first-parent line old ends that tip's does not hold,
// when old is not an ancestor of tip (a branch moved on, or a merge of it, loses
// none); -1 when that cannot be read (the fetch is done all the same). A line that
// has none (a branch with no commit yet) loses none.
func lost(git *vcs.Git, old, tip plumbing.Hash) int {
	if old.IsZero() {
		return 0
	}
	if kept, err := git.IsAncestor(old, tip); err != nil {
		return -1
	} else if kept {
		return 0
	}
	was, err := git.FirstParents(old)
	if err != nil {
		return -1
	}
	now, err := git.FirstParents(tip)
	if err != nil {
		return -1
	}
	kept := make(map[plumbing.Hash]bool, len(now))
	for _, h := range now {
		kept[h] = true
	}
	n := 0
	for _, h := range was {
		if !kept[h] {
			n++
		}
	}
	return n
}

// run does op with refspec on the remote, under the writer lock, within opts.Timeout,
// or WholeHistoryTimeout if it moves a whole history (whole, or a push the transport
// finds to be one).
func run(repo memrepo.Repo, git *vcs.Git, op transport.Op, opts Options, refspec string, whole bool) (upToDate bool, err error) {
	if _, err := git.RemoteURL(opts.Remote); err != nil {
		return false, &Error{Err: err, Hint: fmt.Sprintf(`add it: git -C %s remote add %s URL (a path, file://, http(s):// or ssh://)`,
			shell.Readable(repo.Root), opts.Remote)}
	}
	lock, err := flush.Lock(repo.StateDir())
	if err != nil {
		return false, err
	}
	defer lock.Release()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var notice *time.Timer
	var told sync.Mutex // held from the notice's start to its end, and once run is done
	defer func() {
		told.Lock() // a notice under way ends first; none begins after
		if notice != nil {
			notice.Stop()
		}
	}()
	tell := func() {
		switch {
		case opts.Whole == nil || notice != nil:
		case wholeNotice <= 0:
			opts.Whole()
		default:
			notice = time.AfterFunc(wholeNotice, func() {
				if told.TryLock() {
					opts.Whole()
					told.Unlock()
				}
			})
		}
	}
	bound := opts.Timeout
	if whole {
		bound = max(bound, WholeHistoryTimeout)
		tell()
	}
	timer := time.AfterFunc(bound, cancel)
	defer timer.Stop()
	moreTime := func() { // called by transport.Run, in this goroutine
		if bound < WholeHistoryTimeout && timer.Stop() { // not expired yet
			bound = WholeHistoryTimeout
			timer.Reset(bound)
		}
		tell()
	}
	upToDate, err = transport.Run(ctx, transport.Request{Op: op, GitDir: git.GitDir(), Dir: repo.Root, Remote: opts.Remote,
		RefSpecs: []string{refspec}, Username: opts.Username, Password: opts.Password, SSHKey: opts.SSHKey, Whole: moreTime,
		WholePack: git.PlanWholePack})
	if ctx.Err() != nil {
		return false, &transport.Failure{Kind: transport.KindUnreachable,
			Message: fmt.Sprintf("no answer within %s ([sync] timeout)", bound)}
	}
	return upToDate, err
}

// Error is a push or pull that did not happen, with what to do about it.
type Error struct {
	Err  error
	Kind transport.Kind // "" for a failure before any remote was asked
	Hint string
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// failed describes a failure the remote reported.
func failed(what string, opts Options, git *vcs.Git, f *transport.Failure) *Error {
	where, _ := git.RemoteURL(opts.Remote)
	// The remote's own message may quote the URL, or a credential agmem sent.
	msg := strings.ReplaceAll(f.Message, where, redactURL(where))
	if opts.Password != "" {
		msg = strings.ReplaceAll(msg, opts.Password, "xxxxx")
	}
	if i := strings.Index(where, "://"); i >= 0 {
		if user, _, ok := strings.Cut(where[i+3:], "@"); ok {
			if _, password, ok := strings.Cut(user, ":"); ok && password != "" {
				msg = strings.ReplaceAll(msg, password, "xxxxx")
			}
		}
	}
	switch f.Kind {
	case transport.KindUnreachable:
		msg = "cannot reach it: " + msg
	case transport.KindAuthFailed:
		msg = "credentials refused: " + msg
	}
	e := &Error{Kind: f.Kind, Err: fmt.Errorf("%s %s (%s): %s", what, opts.Remote, redactURL(where), msg)}
	switch {
	case f.Kind == transport.KindUnreachable && strings.HasPrefix(what, "pull"):
		e.Hint = `nothing is lost: the next "agmem pull" fetches what is there once the remote answers`
	case f.Kind == transport.KindUnreachable:
		e.Hint = `nothing is lost: your commits stay here and the next "agmem push" sends them once the remote answers`
	case strings.Contains(msg, "SSH_AUTH_SOCK"):
		e.Hint = "no ssh agent runs: start one with your key (eval $(ssh-agent); ssh-add KEY), or give a key file without a passphrase: [sync] ssh_key (AGMEM_SYNC_SSH_KEY)"
	case f.Kind == transport.KindNoRepository:
		e.Hint = fmt.Sprintf("make it (git init --bare PATH, or a new repository on your git host), or point %s elsewhere: git remote set-url %s URL", opts.Remote, opts.Remote)
	case f.Kind == transport.KindAuthRequired:
		e.Hint = "set AGMEM_SYNC_USERNAME and AGMEM_SYNC_PASSWORD (a token goes in the password), or [sync] username and password, or configure a git credential helper"
	case f.Kind == transport.KindAuthFailed:
		e.Hint = "the remote refused these credentials, or they may not do this: check [sync] username and password (or AGMEM_SYNC_USERNAME, AGMEM_SYNC_PASSWORD) or your git credential helper"
	case f.Kind == transport.KindHostKey:
		e.Hint = "check the host, then add its key: ssh-keyscan HOST >> ~/.ssh/known_hosts"
	case f.Kind == transport.KindRejected:
		e.Hint = "the remote refused the update (a hook or its settings, as its message says); your commits stay here"
	default:
		e.Hint = "nothing is lost: your commits stay here; fix the cause and run the command again"
	}
	return e
}

// redactURL hides a password written into a remote's URL, whether or not the URL
// parses: a password with "%zz", "/" or "#" in it must not come out either.
func redactURL(s string) string {
	scheme := strings.Index(s, "://")
	if scheme < 0 {
		return s
	}
	rest := s[scheme+3:]
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return s
	}
	user, _, hasPassword := strings.Cut(rest[:at], ":")
	if !hasPassword {
		return s
	}
	return s[:scheme+3] + user + ":xxxxx" + rest[at:]
}
