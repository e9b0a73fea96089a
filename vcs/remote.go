package vcs

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// How memory repos meet on a shared remote: each publishes its branch as
// refs/heads/agents/<repo id> there and writes no other ref, so that any number of them
// can push at once without ever touching the same ref; pulling fetches every one of
// those branches into refs/remotes/<remote>/agents/<repo id>, which history reads.
// Nothing here talks to a remote: package vcs/transport does.
const agentsDir = "agents/"

// ErrNoRemote is returned for a remote the repository's configuration does not name.
var ErrNoRemote = errors.New("no remote")

// AgentBranch is the branch that the memory repo with this id publishes on remotes.
func AgentBranch(id string) plumbing.ReferenceName {
	return plumbing.NewBranchReferenceName(agentsDir + id)
}

// AgentsFetchSpec is the refspec that fetches every memory repo's branch from remote
// into its remote-tracking ref. It forces: each tracking ref mirrors a branch that only
// its own repo writes.
func AgentsFetchSpec(remote string) string {
	return "+refs/heads/" + agentsDir + "*:" + agentsTracking(remote) + "*"
}

func agentsTracking(remote string) string {
	return "refs/remotes/" + remote + "/" + agentsDir
}

// GitDir is the repository's .git directory.
func (r *Git) GitDir() string { return r.gitDir }

// RemoteURL is the URL git pushes to for the named remote (its last one, as go-git does).
func (r *Git) RemoteURL(name string) (string, error) {
	cfg, err := r.st.Config()
	if err != nil {
		return "", fmt.Errorf("read git config: %w", err)
	}
	remote, ok := cfg.Remotes[name]
	if !ok || len(remote.URLs) == 0 {
		var names []string
		for n := range cfg.Remotes {
			names = append(names, n)
		}
		sort.Strings(names)
		if len(names) == 0 {
			return "", fmt.Errorf("%w named %q (the repository has none)", ErrNoRemote, name)
		}
		return "", fmt.Errorf("%w named %q (it has %s)", ErrNoRemote, name, strings.Join(names, ", "))
	}
	return remote.URLs[len(remote.URLs)-1], nil
}

// Fetched is another memory repo's branch as it was last fetched from a remote.
type Fetched struct {
	Remote string // the remote it was fetched from
	ID     string // the repo id it was published under
	Tip    plumbing.Hash
}

// Name is how git names the fetched branch: "origin/agents/<id>".
func (f Fetched) Name() string { return f.Remote + "/" + agentsDir + f.ID }

// FetchedAgents lists the memory repos' branches fetched from every remote, sorted by
// name; with remote not "", those fetched from that remote only.
func (r *Git) FetchedAgents(remote string) ([]Fetched, error) {
	refs, err := r.references()
	if err != nil {
		return nil, err
	}
	var out []Fetched
	for _, ref := range refs {
		rest, ok := strings.CutPrefix(ref.Name().String(), "refs/remotes/")
		if !ok || ref.Type() != plumbing.HashReference {
			continue
		}
		from, id, ok := strings.Cut(rest, "/"+agentsDir)
		if ok && id != "" && (remote == "" || from == remote) {
			out = append(out, Fetched{Remote: from, ID: id, Tip: ref.Hash()})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}
