package sign

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/agmem/agmem/internal/hint"
)

// sshNamespace is the namespace git signs commits in.
const sshNamespace = "git"

// agentTimeout bounds one exchange with the ssh-agent: one that asks a person to
// confirm each use must not hold a flush for ever.
const agentTimeout = 10 * time.Second

// isLiteralKey reports whether user.signingKey holds a public key itself, as git
// allows: "key::ssh-ed25519 AAAA…", or (deprecated in git) "ssh-ed25519 AAAA…".
func isLiteralKey(key string) bool {
	return strings.HasPrefix(key, "key::") || strings.HasPrefix(key, "ssh-")
}

// openSSH readies an SSH signer: a private key file is used as it is; a public key (a
// file or literal) or a key file with a passphrase is used through the ssh-agent.
func openSSH(key string) (*Signer, error) {
	if key == "" {
		return nil, hint.With(errors.New("git's user.signingKey is not set"),
			`name the key: "git config user.signingKey ~/.ssh/id_ed25519.pub" in the memory repo`)
	}
	var pub ssh.PublicKey
	if isLiteralKey(key) {
		p, _, _, _, err := ssh.ParseAuthorizedKey([]byte(strings.TrimPrefix(key, "key::")))
		if err != nil {
			return nil, fmt.Errorf("git's user.signingKey is not an SSH public key: %v", err)
		}
		pub = p
	} else {
		data, err := os.ReadFile(key)
		if err != nil {
			return nil, hint.With(fmt.Errorf("read signing key: %w", err), "git's user.signingKey names it")
		}
		if p, _, _, _, err := ssh.ParseAuthorizedKey(data); err == nil {
			pub = p
		} else {
			signer, err := ssh.ParsePrivateKey(data)
			var locked *ssh.PassphraseMissingError
			switch {
			case errors.As(err, &locked) && locked.PublicKey != nil:
				pub = locked.PublicKey
			case errors.As(err, &locked):
				return nil, hint.With(fmt.Errorf("signing key %s has a passphrase", key),
					`add it to the ssh-agent ("ssh-add `+key+`") and name its .pub in user.signingKey`)
			case err != nil:
				return nil, fmt.Errorf("read signing key %s: %v", key, err)
			default:
				return &Signer{sign: func(p []byte) ([]byte, error) { return sshSign(signer, p) }}, nil
			}
		}
	}
	return agentSigner(pub)
}

// agentSigner is the ssh-agent's key pub.
func agentSigner(pub ssh.PublicKey) (*Signer, error) {
	sock := os.Getenv("SSH_AUTH_SOCK")
	if sock == "" {
		return nil, hint.With(errors.New("the signing key is in no ssh-agent: SSH_AUTH_SOCK is not set"),
			"start ssh-agent and add the key with ssh-add, or name a private key file in user.signingKey")
	}
	conn, err := net.DialTimeout("unix", sock, agentTimeout)
	if err != nil {
		return nil, hint.With(fmt.Errorf("reach the ssh-agent: %w", err), "is ssh-agent running at SSH_AUTH_SOCK?")
	}
	conn.SetDeadline(time.Now().Add(agentTimeout))
	signers, err := agent.NewClient(conn).Signers()
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("ask the ssh-agent for its keys: %w", err)
	}
	want := pub.Marshal()
	for _, s := range signers {
		if bytes.Equal(s.PublicKey().Marshal(), want) {
			return &Signer{
				sign: func(p []byte) ([]byte, error) {
					conn.SetDeadline(time.Now().Add(agentTimeout))
					return sshSign(s, p)
				},
				close: func() { conn.Close() },
			}, nil
		}
	}
	conn.Close()
	return nil, hint.With(fmt.Errorf("the ssh-agent does not hold the signing key %s", ssh.FingerprintSHA256(pub)),
		"add it with ssh-add")
}

// sshSign makes the armored SSH signature of payload, as ssh-keygen -Y sign -n git.
func sshSign(s ssh.Signer, payload []byte) ([]byte, error) {
	sig, err := sshsig.Sign(bytes.NewReader(payload), s, sshsig.HashSHA512, sshNamespace)
	if err != nil {
		return nil, err
	}
	return sshsig.Armor(sig), nil
}
