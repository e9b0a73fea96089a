// Package transport talks to git remotes: push and fetch through go-git's transports
// (local paths and file://, http(s)://, ssh://), and every failure sorted by what the
// person who hit it can do about it (Kind). It is linked into agmem, never into
// agmem-record, which hooks run.
//
// Credentials: for http(s), the request's username and password, else those written
// into the remote's URL, else, once the server asks for them, what `git credential fill`
// gives (the person's credential helpers), which is then approved or rejected as git
// itself does. For ssh, the request's key file, else the ssh agent; the host must be in
// known_hosts.
package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	gittransport "github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	"github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/plumbing/transport/server"
	"github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Op is what a request asks of the remote.
type Op string

const (
	OpPush  Op = "push"
	OpFetch Op = "fetch"
)

// Request is one push or fetch.
type Request struct {
	Op     Op
	GitDir string
	// Dir is where a remote given as a relative path is found from: the worktree.
	Dir string
	// Remote is a remote that the repository's git configuration names.
	Remote   string
	RefSpecs []string
	// Username and Password authenticate over http(s) (a token goes in Password); when
	// both are empty, the URL's or a credential helper's are used.
	Username, Password string
	// SSHKey is a private key file for ssh remotes; "" uses the ssh agent.
	SSHKey string
	// Whole, when set, is told that a push sends a branch the remote lacks, and so all
	// of its history, before that is sent.
	Whole func()
	// WholePack, when set, plans the pack that a push of a branch the remote lacks sends:
	// every object tip reaches but what haves (the remote's refs) reach
	// (vcs.Git.PlanWholePack); go-git's push does it otherwise.
	WholePack func(tip plumbing.Hash, haves []plumbing.Hash) (io.WriterTo, error)
}

// Failure is why the remote did not do what was asked.
type Failure struct {
	Kind    Kind
	Message string // one line
}

func (f *Failure) Error() string { return f.Message }

// Kind sorts failures by what the person who hit one can do about it.
type Kind string

const (
	KindUnreachable  Kind = "unreachable"   // nothing answered: down, wrong host, no network
	KindNoRepository Kind = "no-repository" // it answered, but holds no repository there
	KindAuthRequired Kind = "auth-required" // it wants credentials and got none
	KindAuthFailed   Kind = "auth-failed"   // it refused the credentials it got
	KindHostKey      Kind = "host-key"      // an ssh host whose key is not known
	KindDiverged     Kind = "diverged"      // the branch there is not an ancestor of the one pushed
	KindRejected     Kind = "rejected"      // it refused the update: a hook, its settings
	KindOther        Kind = "failed"
)

// Run does what req asks until ctx is done. upToDate says the remote (push) or the
// local refs (fetch) needed nothing; a failure is a *Failure.
func Run(ctx context.Context, req Request) (upToDate bool, err error) {
	useOwnFileServer.Do(func() {
		if _, err := exec.LookPath("git"); err != nil {
			// go-git's file transport runs git-upload-pack and git-receive-pack; without
			// git, its own server in this process stands in for them.
			client.InstallProtocol("file", server.NewClient(server.DefaultLoader))
		}
	})
	st := filesystem.NewStorage(osfs.New(req.GitDir), cache.NewObjectLRUDefault())
	cfg, err := st.Config()
	if err != nil {
		return false, failure(KindOther, fmt.Errorf("read git config: %w", err))
	}
	rc, ok := cfg.Remotes[req.Remote]
	if !ok || len(rc.URLs) == 0 {
		return false, failure(KindOther, fmt.Errorf("no remote %q in %s", req.Remote, req.GitDir))
	}
	url := rc.URLs[len(rc.URLs)-1]
	ep, err := gittransport.NewEndpoint(url)
	if err != nil {
		return false, failure(KindOther, err)
	}
	if ep.Protocol == "file" && !strings.HasPrefix(url, "file://") && !filepath.IsAbs(url) {
		// A relative path, which go-git takes from the working directory: git takes it
		// from the worktree, wherever agmem runs.
		local := *rc
		local.URLs = []string{filepath.Join(req.Dir, url)}
		rc = &local
		if ep, err = gittransport.NewEndpoint(local.URLs[0]); err != nil {
			return false, failure(KindOther, err)
		}
	}
	auth, err := authFor(ep, req)
	if err != nil {
		return false, failure(KindOther, err)
	}
	remote := git.NewRemote(st, rc)
	do := func(auth gittransport.AuthMethod) error {
		specs := make([]config.RefSpec, len(req.RefSpecs))
		for i, s := range req.RefSpecs {
			specs[i] = config.RefSpec(s)
		}
		switch req.Op {
		case OpPush:
			if len(specs) == 1 {
				err := pushFastForward(ctx, st, rc, ep, auth, specs[0], req)
				if errors.Is(err, errNoBranchThere) && req.Whole != nil {
					req.Whole()
				}
				if !errors.Is(err, errNotFastForward) {
					return err
				}
			}
			return remote.PushContext(ctx, &git.PushOptions{RemoteName: req.Remote, RefSpecs: specs, Auth: auth})
		case OpFetch:
			// Prune: a branch deleted on the remote (to purge what it held) goes here too.
			return remote.FetchContext(ctx, &git.FetchOptions{RemoteName: req.Remote, RefSpecs: specs, Auth: auth, Tags: git.NoTags, Prune: true})
		}
		return fmt.Errorf("unknown operation %q", req.Op)
	}
	err = do(auth)
	sent := auth != nil || ep.User != ""
	if errors.Is(err, gittransport.ErrAuthenticationRequired) && !sent && isHTTP(ep) {
		if helped := credentialFill(req.Dir, ep); helped != nil {
			err, sent = do(helped), true
			action := "approve"
			if isAuthFailure(err) {
				action = "reject"
			}
			credential(req.Dir, action, ep, helped)
		}
	}
	switch {
	case err == nil:
		return false, nil
	case errors.Is(err, git.NoErrAlreadyUpToDate), errors.Is(err, gittransport.ErrEmptyRemoteRepository):
		return true, nil
	}
	return false, failure(classify(err, sent), err)
}

// useOwnFileServer is done once per process: go-git's protocols are a global table.
var useOwnFileServer sync.Once

func failure(kind Kind, err error) *Failure {
	return &Failure{Kind: kind, Message: oneLine(err.Error())}
}

func isHTTP(ep *gittransport.Endpoint) bool { return ep.Protocol == "http" || ep.Protocol == "https" }

// authFor is the authentication the request gives, or nil for go-git's own choice: the
// URL's credentials over http(s), the ssh agent over ssh.
func authFor(ep *gittransport.Endpoint, req Request) (gittransport.AuthMethod, error) {
	switch {
	case isHTTP(ep):
		user, password := req.Username, req.Password
		if user == "" && password == "" {
			return nil, nil
		}
		if user == "" {
			user = "agmem" // hosts take a token with any user name
		}
		return &http.BasicAuth{Username: user, Password: password}, nil
	case ep.Protocol == "ssh" && req.SSHKey != "":
		user := ep.User
		if user == "" {
			user = "git"
		}
		keys, err := ssh.NewPublicKeysFromFile(user, req.SSHKey, "")
		if err != nil {
			return nil, fmt.Errorf("ssh key %s: %w (a key with a passphrase: add it to the ssh agent and leave [sync] ssh_key empty)", req.SSHKey, err)
		}
		return keys, nil
	}
	return nil, nil
}

// credentialFill asks the person's git credential helpers (and the repository's, in
// dir) for the endpoint's credentials, without prompting; nil when they have none or git is not there.
func credentialFill(dir string, ep *gittransport.Endpoint) *http.BasicAuth {
	out, err := credential(dir, "fill", ep, nil)
	if err != nil {
		return nil
	}
	var a http.BasicAuth
	for _, line := range strings.Split(string(out), "\n") {
		k, v, _ := strings.Cut(line, "=")
		switch k {
		case "username":
			a.Username = v
		case "password":
			a.Password = v
		}
	}
	if a.Password == "" {
		return nil
	}
	return &a
}

// credential runs `git credential <action>` for the endpoint, as git does around a
// request: fill asks for credentials, approve and reject tell the helpers how they did.
func credential(dir, action string, ep *gittransport.Endpoint, a *http.BasicAuth) ([]byte, error) {
	host := ep.Host
	if ep.Port != 0 {
		host += ":" + strconv.Itoa(ep.Port)
	}
	in := "protocol=" + ep.Protocol + "\nhost=" + host + "\npath=" + strings.TrimPrefix(ep.Path, "/") + "\n"
	if a != nil {
		in += "username=" + a.Username + "\npassword=" + a.Password + "\n"
	}
	cmd := exec.Command("git", "credential", action)
	cmd.Dir = dir // where the repository's own credential.helper is read
	// Never a prompt: agmem runs under hooks and the daemon, where no one answers one.
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	cmd.Stdin = strings.NewReader(in + "\n")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	err := cmd.Run()
	return stdout.Bytes(), err
}

func isAuthFailure(err error) bool {
	return errors.Is(err, gittransport.ErrAuthenticationRequired) || errors.Is(err, gittransport.ErrAuthorizationFailed)
}

// classify sorts an error of go-git's by what the person can do about it; sent says
// whether credentials went with the request.
func classify(err error, sent bool) Kind {
	msg := err.Error()
	var netErr net.Error
	switch {
	case errors.Is(err, gittransport.ErrRepositoryNotFound):
		return KindNoRepository
	case errors.Is(err, gittransport.ErrAuthenticationRequired) && !sent:
		return KindAuthRequired
	case isAuthFailure(err):
		return KindAuthFailed
	case strings.Contains(msg, "knownhosts:") || strings.Contains(msg, "host key"):
		return KindHostKey
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH),
		errors.As(err, &netErr), errors.Is(err, context.DeadlineExceeded):
		return KindUnreachable
	case errors.Is(err, git.ErrForceNeeded), strings.Contains(msg, "non-fast-forward"), strings.Contains(msg, "fetch first"):
		return KindDiverged
	case strings.Contains(msg, "command error on"), strings.Contains(msg, "unpack error"):
		return KindRejected
	}
	return KindOther
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
