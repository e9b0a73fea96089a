package transport

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	gittransport "github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// maxFastForward bounds the commits pushFastForward walks looking for the remote's tip;
// a push of more goes through go-git's own.
const maxFastForward = 10000

// errNotFastForward says pushFastForward cannot tell the push from a fast-forward of a
// linear history it can walk: go-git's own push does it, and says what went wrong.
var errNotFastForward = errors.New("not a short linear fast-forward")

// errNoBranchThere is errNotFastForward for a branch the remote lacks: go-git's push
// sends all of its history.
var errNoBranchThere = fmt.Errorf("%w: the remote lacks the branch", errNotFastForward)

// pushFastForward pushes the one refspec src:dst as a fast-forward of a linear history,
// sending the objects the new commits brought, found by comparing each commit's tree
// with its parent's. go-git's push works out what to send by walking every object the
// remote's refs reach, which grows with the history: a year's memory repo took
// seconds a push. To a remote without dst, it sends the pack req.WholePack plans of
// src's history, after telling req.Whole. It gives errNotFastForward, having
// sent nothing, when dst is not found within maxFastForward first parents of src, or
// when a merge is on the way; errNoBranchThere when the remote has no dst and
// req.WholePack is not there, or the remote takes no offset deltas.
func pushFastForward(ctx context.Context, st *filesystem.Storage, rc *config.RemoteConfig, ep *gittransport.Endpoint,
	auth gittransport.AuthMethod, spec config.RefSpec, req Request) error {
	if spec.IsWildcard() || spec.IsDelete() || spec.IsForceUpdate() {
		return errNotFastForward
	}
	src, err := st.Reference(plumbing.ReferenceName(spec.Src()))
	if err != nil {
		return errNotFastForward
	}
	c, err := client.NewClient(ep)
	if err != nil {
		return err
	}
	sess, err := c.NewReceivePackSession(ep, auth)
	if err != nil {
		return err
	}
	defer sess.Close()
	ar, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil {
		return err
	}
	refs, err := ar.AllReferences()
	if err != nil {
		return err
	}
	dst := spec.Dst(src.Name())
	update := packp.NewReferenceUpdateRequestFromCapabilities(ar.Capabilities)
	var writePack func(io.Writer) error
	switch old, ok := refs[dst]; {
	case !ok && (req.WholePack == nil || !ar.Capabilities.Supports(capability.OFSDelta)):
		return errNoBranchThere
	case !ok:
		if req.Whole != nil { // before the plan, which reads the whole history
			req.Whole()
		}
		var haves []plumbing.Hash
		for _, ref := range refs {
			if ref.Type() == plumbing.HashReference {
				haves = append(haves, ref.Hash())
			}
		}
		pack, err := req.WholePack(src.Hash(), haves)
		if err != nil {
			return err
		}
		update.Commands = []*packp.Command{{Name: dst, New: src.Hash()}}
		writePack = func(w io.Writer) error {
			_, err := pack.WriteTo(w)
			return err
		}
	case old.Type() != plumbing.HashReference:
		return errNotFastForward
	case old.Hash() == src.Hash():
		return git.NoErrAlreadyUpToDate
	default:
		objects, err := newObjects(st, src.Hash(), old.Hash())
		if err != nil {
			return err
		}
		cfg, err := st.Config()
		if err != nil {
			return err
		}
		update.Commands = []*packp.Command{{Name: dst, Old: old.Hash(), New: src.Hash()}}
		writePack = func(w io.Writer) error {
			_, err := packfile.NewEncoder(w, st, !ar.Capabilities.Supports(capability.OFSDelta)).Encode(objects, cfg.Pack.Window)
			return err
		}
	}
	pack, w := io.Pipe()
	update.Packfile = pack
	written := make(chan error, 1)
	go func() {
		err := writePack(w)
		// A pack that could not be written whole is ended where it is, for the remote to
		// refuse: broken off instead, go-git's ReceivePack returned at once and left a
		// local remote's git-receive-pack waiting for the rest, and the session's end
		// waiting for it.
		w.Close()
		written <- err
	}()
	rs, err := sess.ReceivePack(ctx, update)
	pack.Close() // a writer the remote stopped reading stops too
	if werr := <-written; werr != nil && !errors.Is(werr, io.ErrClosedPipe) {
		return werr
	}
	if err != nil {
		return err
	}
	if rs != nil {
		if err := rs.Error(); err != nil {
			return err
		}
	}
	// The remote-tracking ref follows, as git's push and go-git's do.
	for _, fetch := range rc.Fetch {
		if fetch.Match(dst) {
			if err := st.SetReference(plumbing.NewHashReference(fetch.Dst(dst), src.Hash())); err != nil {
				return err
			}
		}
	}
	return nil
}

// newObjects are the commits from tip back to base (base excluded) along a linear
// history, and the trees and blobs each brought that its parent did not have.
func newObjects(st *filesystem.Storage, tip, base plumbing.Hash) ([]plumbing.Hash, error) {
	var commits []*object.Commit
	for h := tip; h != base; {
		if len(commits) == maxFastForward {
			return nil, errNotFastForward
		}
		c, err := object.GetCommit(st, h)
		if err != nil {
			return nil, err
		}
		if len(c.ParentHashes) != 1 {
			return nil, errNotFastForward
		}
		commits = append(commits, c)
		h = c.ParentHashes[0]
	}
	seen := map[plumbing.Hash]bool{}
	var out []plumbing.Hash
	add := func(h plumbing.Hash) bool {
		if seen[h] {
			return false
		}
		seen[h] = true
		out = append(out, h)
		return true
	}
	for _, c := range commits {
		add(c.Hash)
		parent, err := object.GetCommit(st, c.ParentHashes[0])
		if err != nil {
			return nil, err
		}
		if err := newInTree(st, c.TreeHash, parent.TreeHash, add); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// newInTree adds tree, if add has not seen it, and what it holds that the tree was
// (zero: none) does not hold at the same path. What was holds is on the remote, or
// added when its own commit is compared with its parent.
func newInTree(st *filesystem.Storage, tree, was plumbing.Hash, add func(plumbing.Hash) bool) error {
	if tree == was || !add(tree) {
		return nil
	}
	t, err := object.GetTree(st, tree)
	if err != nil {
		return err
	}
	before := map[string]object.TreeEntry{}
	if !was.IsZero() {
		w, err := object.GetTree(st, was)
		if err != nil {
			return err
		}
		for _, e := range w.Entries {
			before[e.Name] = e
		}
	}
	for _, e := range t.Entries {
		b, had := before[e.Name]
		switch {
		case had && b.Hash == e.Hash:
		case e.Mode == filemode.Dir:
			var within plumbing.Hash
			if had && b.Mode == filemode.Dir {
				within = b.Hash
			}
			if err := newInTree(st, e.Hash, within, add); err != nil {
				return err
			}
		case e.Mode == filemode.Submodule:
		default:
			add(e.Hash)
		}
	}
	return nil
}
