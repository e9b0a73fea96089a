// Package sign owns the signatures on agmem's commits: which key the memory repo's git
// configuration names and whether agmem signs with it ([audit] sign), making a
// signature in git's own format — an SSH signature (namespace "git", SHA-512) from a
// key file or the ssh-agent, or an OpenPGP one made by the gpg program run as git runs
// it — and checking a commit's signature as git verify-commit does: an SSH signature
// against gpg.ssh.allowedSignersFile, an OpenPGP one by gpg with the user's keyring.
package sign

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/vcs"
)

// Mode is when agmem signs its commits ([audit] sign).
type Mode string

const (
	// Auto signs as git would: when the repo's git configuration sets commit.gpgSign,
	// best effort.
	Auto Mode = "auto"
	// Off never signs.
	Off Mode = "off"
	// BestEffort signs each commit it can and commits the others unsigned, saying so.
	BestEffort Mode = "best-effort"
	// Required signs every commit; a flush that cannot sign fails and commits nothing.
	Required Mode = "required"
)

// Settings are how a memory repo's commits are signed.
type Settings struct {
	Mode   Mode   // Off, BestEffort or Required: Auto is resolved
	Format string // gpg.format: "openpgp" (git's default) or "ssh"
	// Key is user.signingKey: for ssh a key file (private, or public with the private
	// key in the ssh-agent) or "key::<public key>"; for openpgp a key id for gpg.
	Key string
	// Program is gpg.openpgp.program, else gpg.program, else gpg: what signs and checks
	// an OpenPGP commit, whatever the format this repo signs with.
	Program string
	// MinTrust is gpg.minTrustLevel: the least trust gpg must have in an OpenPGP
	// signature's key for it to count as good ("undefined", as git, when unset).
	MinTrust string
	// AllowedSigners is gpg.ssh.allowedSignersFile, the keys an SSH signature is
	// checked against.
	AllowedSigners string
	// Committer is "Name <email>", whose key gpg signs with when Key is empty.
	Committer string
}

// ForRepo is how the memory repo repo signs, with mode as [audit] sign gives it: read
// from its git configuration, committer and worktree.
func ForRepo(mode Mode, repo *vcs.Git) Settings {
	return FromGit(mode, repo.GitConfig(), repo.CommitterIdent(), repo.Root)
}

// FromGit reads the settings of a memory repo: mode as [audit] sign gives it, the rest
// from git's configuration (setting reads one variable), relative paths from dir.
func FromGit(mode Mode, setting func(name string) string, committer, dir string) Settings {
	if mode == "" || mode == Auto {
		mode = Off
		if gitBool(setting("commit.gpgSign")) {
			mode = BestEffort
		}
	}
	s := Settings{Mode: mode, Format: strings.ToLower(setting("gpg.format")),
		Key: setting("user.signingKey"), Committer: committer}
	if s.Format == "" {
		s.Format = "openpgp"
	}
	s.Program = cmp.Or(setting("gpg.openpgp.program"), setting("gpg.program"), "gpg")
	s.MinTrust = strings.ToLower(setting("gpg.minTrustLevel"))
	if f := setting("gpg.ssh.allowedSignersFile"); f != "" {
		s.AllowedSigners = path(f, dir)
	}
	if s.Format == "ssh" && s.Key != "" && !isLiteralKey(s.Key) {
		s.Key = path(s.Key, dir)
	}
	return s
}

// On reports whether commits are to be signed.
func (s Settings) On() bool { return s.Mode == BestEffort || s.Mode == Required }

// Describe names the key, for agmem status.
func (s Settings) Describe() string {
	key := s.Key
	if key == "" {
		key = s.Committer
	}
	return s.Format + " " + key
}

// Signer signs commits with one key.
type Signer struct {
	sign  func(payload []byte) ([]byte, error)
	close func()
}

// Sign returns the armored signature of payload, as git keeps it in a commit.
func (s *Signer) Sign(payload []byte) ([]byte, error) { return s.sign(payload) }

// Close lets go of what Open took: the connection to the ssh-agent.
func (s *Signer) Close() {
	if s.close != nil {
		s.close()
	}
}

// Open readies the signer the settings name. It fails when the key cannot be had.
func (s Settings) Open() (*Signer, error) {
	switch s.Format {
	case "ssh":
		return openSSH(s.Key)
	case "openpgp":
		key := s.Key
		if key == "" {
			key = s.Committer
		}
		signer := &Signer{sign: func(p []byte) ([]byte, error) { return gpgSign(s.Program, key, p) }}
		// Signed once now, before the flush takes git's index lock: a key gpg cannot use,
		// or a passphrase its agent asks for, is met here, not while git waits.
		if _, err := signer.Sign([]byte("agmem: can this key sign?\n")); err != nil {
			return nil, err
		}
		return signer, nil
	}
	return nil, hint.With(fmt.Errorf("git's gpg.format is %q: agmem signs with openpgp or ssh", s.Format),
		`set "git config gpg.format ssh" or "openpgp" in the memory repo`)
}

// gitBool reads a git boolean as git does.
func gitBool(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "yes", "on", "1":
		return true
	}
	return false
}

// path is a file named in git's configuration: "~/" is the home directory, and a
// relative path is taken from dir.
func path(p, dir string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	if !filepath.IsAbs(p) {
		return filepath.Join(dir, p)
	}
	return p
}
