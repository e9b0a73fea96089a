// Package sign owns the signatures on agmem's commits: which key the memory repo's git
// configuration names and whether agmem signs with it ([audit] sign), making a
// signature in git's own format — an SSH signature (namespace "git", SHA-512) from a
// key file or the ssh-agent, or an OpenPGP one made by the gpg program run as git runs
// it — and checking a commit's signature as git verify-commit does: an SSH signature
// against gpg.ssh.allowedSignersFile, an OpenPGP one by gpg with the user's keyring.
package sign

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agmem/agmem/internal/hint"
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
	// Program is gpg.<format>.program, else gpg.program: what signs an OpenPGP commit.
	Program string
	// AllowedSigners is gpg.ssh.allowedSignersFile, the keys an SSH signature is
	// checked against.
	AllowedSigners string
	// Committer is "Name <email>", whose key gpg signs with when Key is empty.
	Committer string
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
	s.Program = setting("gpg." + s.Format + ".program")
	if s.Program == "" && s.Format == "openpgp" {
		s.Program = setting("gpg.program")
	}
	if s.Program == "" {
		s.Program = "gpg"
	}
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
		return &Signer{sign: func(p []byte) ([]byte, error) { return gpgSign(s.Program, key, p) }}, nil
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
