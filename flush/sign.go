package flush

import (
	"fmt"

	"github.com/agmem/agmem/journal"
	"github.com/agmem/agmem/sign"
	"github.com/agmem/agmem/vcs"
)

// signing signs a flush's commits as the repo's settings ask. The key is made ready
// once the flush has something to commit, before it asks a model or takes git's index
// lock: a flush with nothing to commit asks no ssh-agent and runs no gpg, and in
// required mode a key that cannot be had fails the flush before it commits anything.
// Best effort, a commit that cannot be signed is made unsigned, and the flush says why
// once.
type signing struct {
	settings sign.Settings
	signer   *sign.Signer
	opened   bool
	failed   error           // why commits are left unsigned, best effort
	last     journal.Signing // of the last commit signed through Sign
	warn     func(error)
}

func newSigning(repo *vcs.Git, opts Options) *signing {
	return &signing{settings: sign.ForRepo(opts.Sign, repo),
		warn: opts.Warn}
}

// ready returns what signs the next commits (nil: none), or why none can in required
// mode.
func (s *signing) ready() (vcs.Signer, error) {
	if !s.settings.On() {
		return nil, nil
	}
	if !s.opened {
		s.opened = true
		signer, err := s.settings.Open()
		if err != nil && s.settings.Mode == sign.Required {
			s.opened = false
			return nil, fmt.Errorf("sign commits ([audit] sign = required): %w", err)
		}
		s.signer = signer
		s.fail(err)
	}
	return s, nil
}

// Sign signs payload, or leaves the commit unsigned where that is allowed.
func (s *signing) Sign(payload []byte) ([]byte, error) {
	s.last = journal.Signing{}
	if s.signer == nil {
		s.last.Failed = s.failed.Error()
		return nil, nil
	}
	sig, err := s.signer.Sign(payload)
	if err != nil {
		if s.settings.Mode == sign.Required {
			return nil, err
		}
		s.fail(err)
		s.last.Failed = err.Error()
		return nil, nil
	}
	s.last.Signed = true
	return sig, nil
}

// fail notes why commits are left unsigned, and says so the first time.
func (s *signing) fail(err error) {
	if err == nil || s.failed != nil {
		return
	}
	s.failed = err
	if s.warn != nil {
		s.warn(fmt.Errorf("commits left unsigned ([audit] sign is best effort): %w", err))
	}
}

func (s *signing) close() {
	if s.signer != nil {
		s.signer.Close()
	}
}
