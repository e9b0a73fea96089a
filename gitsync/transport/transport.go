// Package transport does what package gitsync asks of a remote, inside agmem-sync:
// push and fetch through go-git's transports (local paths and file://, http(s)://,
// ssh://). It is linked into agmem-sync only, never into agmem.
//
// Credentials: for http(s), $AGMEM_SYNC_USERNAME and $AGMEM_SYNC_PASSWORD, else those
// written into the remote's URL, else, once the server asks for them, what `git
// credential fill` gives (the person's credential helpers), which is then approved or
// rejected as git itself does. For ssh, the request's key file, else the ssh agent; the
// host must be in known_hosts.
package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/cache"
	gittransport "github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	"github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/plumbing/transport/server"
	"github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/agmem/agmem/gitsync"
)

// Serve does what req asks and says how it went. getenv reads the environment.
func Serve(ctx context.Context, req gitsync.Request, getenv func(string) string) gitsync.Response {
	if _, err := exec.LookPath("git"); err != nil {
		// go-git's file transport runs git-upload-pack and git-receive-pack; without
		// git, its own server in this process stands in for them.
		client.InstallProtocol("file", server.NewClient(server.DefaultLoader))
	}
	st := filesystem.NewStorage(osfs.New(req.GitDir), cache.NewObjectLRUDefault())
	cfg, err := st.Config()
	if err != nil {
		return failure(gitsync.KindOther, fmt.Errorf("read git config: %w", err))
	}
	rc, ok := cfg.Remotes[req.Remote]
	if !ok || len(rc.URLs) == 0 {
		return failure(gitsync.KindOther, fmt.Errorf("no remote %q in %s", req.Remote, req.GitDir))
	}
	ep, err := gittransport.NewEndpoint(rc.URLs[len(rc.URLs)-1])
	if err != nil {
		return failure(gitsync.KindOther, err)
	}
	auth, err := authFor(ep, req, getenv)
	if err != nil {
		return failure(gitsync.KindOther, err)
	}
	remote := git.NewRemote(st, rc)
	do := func(auth gittransport.AuthMethod) error {
		specs := make([]config.RefSpec, len(req.RefSpecs))
		for i, s := range req.RefSpecs {
			specs[i] = config.RefSpec(s)
		}
		switch req.Op {
		case gitsync.OpPush:
			return remote.PushContext(ctx, &git.PushOptions{RemoteName: req.Remote, RefSpecs: specs, Auth: auth})
		case gitsync.OpFetch:
			return remote.FetchContext(ctx, &git.FetchOptions{RemoteName: req.Remote, RefSpecs: specs, Auth: auth, Tags: git.NoTags})
		}
		return fmt.Errorf("unknown operation %q", req.Op)
	}
	err = do(auth)
	sent := auth != nil || ep.User != ""
	if errors.Is(err, gittransport.ErrAuthenticationRequired) && !sent && isHTTP(ep) {
		if helped := credentialFill(ep); helped != nil {
			err, sent = do(helped), true
			action := "approve"
			if isAuthFailure(err) {
				action = "reject"
			}
			credential(action, ep, helped)
		}
	}
	switch {
	case err == nil:
		return gitsync.Response{}
	case errors.Is(err, git.NoErrAlreadyUpToDate), errors.Is(err, gittransport.ErrEmptyRemoteRepository):
		return gitsync.Response{UpToDate: true}
	}
	return failure(classify(err, sent), err)
}

func failure(kind gitsync.Kind, err error) gitsync.Response {
	return gitsync.Response{Failure: &gitsync.Failure{Kind: kind, Message: oneLine(err.Error())}}
}

func isHTTP(ep *gittransport.Endpoint) bool { return ep.Protocol == "http" || ep.Protocol == "https" }

// authFor is the authentication the request and the environment give, or nil for
// go-git's own choice: the URL's credentials over http(s), the ssh agent over ssh.
func authFor(ep *gittransport.Endpoint, req gitsync.Request, getenv func(string) string) (gittransport.AuthMethod, error) {
	switch {
	case isHTTP(ep):
		user, password := getenv(gitsync.EnvUsername), getenv(gitsync.EnvPassword)
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

// credentialFill asks the person's git credential helpers for the endpoint's
// credentials, without prompting; nil when they have none or git is not there.
func credentialFill(ep *gittransport.Endpoint) *http.BasicAuth {
	out, err := credential("fill", ep, nil)
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
func credential(action string, ep *gittransport.Endpoint, a *http.BasicAuth) ([]byte, error) {
	host := ep.Host
	if ep.Port != 0 {
		host += ":" + strconv.Itoa(ep.Port)
	}
	in := "protocol=" + ep.Protocol + "\nhost=" + host + "\npath=" + strings.TrimPrefix(ep.Path, "/") + "\n"
	if a != nil {
		in += "username=" + a.Username + "\npassword=" + a.Password + "\n"
	}
	cmd := exec.Command("git", "credential", action)
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
func classify(err error, sent bool) gitsync.Kind {
	msg := err.Error()
	var netErr net.Error
	switch {
	case errors.Is(err, gittransport.ErrRepositoryNotFound):
		return gitsync.KindNoRepository
	case errors.Is(err, gittransport.ErrAuthenticationRequired) && !sent:
		return gitsync.KindAuthRequired
	case isAuthFailure(err):
		return gitsync.KindAuthFailed
	case strings.Contains(msg, "knownhosts:") || strings.Contains(msg, "host key"):
		return gitsync.KindHostKey
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH),
		errors.As(err, &netErr), errors.Is(err, context.DeadlineExceeded):
		return gitsync.KindUnreachable
	case errors.Is(err, git.ErrForceNeeded), strings.Contains(msg, "non-fast-forward"), strings.Contains(msg, "fetch first"):
		return gitsync.KindDiverged
	case strings.Contains(msg, "command error on"), strings.Contains(msg, "unpack error"):
		return gitsync.KindRejected
	}
	return gitsync.KindOther
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
