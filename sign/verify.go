package sign

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// Status is what a commit's signature proves.
type Status string

const (
	// Unsigned: the commit has no signature.
	Unsigned Status = "unsigned"
	// Good: the signature is of this commit, by a key allowed to sign.
	Good Status = "good"
	// Bad: the signature is not of this commit as it stands, or cannot be read.
	Bad Status = "bad"
	// Unknown: the signature is good, but its key is not among the allowed signers.
	Unknown Status = "unknown-key"
)

// Check is what one commit's signature proves, and by whom.
type Check struct {
	Status Status `json:"status"`
	Format string `json:"format,omitempty"` // "ssh" or "openpgp"
	Key    string `json:"key,omitempty"`    // the key's fingerprint (ssh) or id (openpgp)
	Signer string `json:"signer,omitempty"` // the allowed signer's principals, or the key's user id
	Reason string `json:"reason,omitempty"` // why it is not good
}

// Verifier checks commit signatures as git verify-commit does.
type Verifier struct {
	allowed     []allowedSigner
	allowedFrom string // the allowed signers file; "" when none is configured
	program     string
	minTrust    int // the least of gpgTrust an OpenPGP key needs
}

// Verifier reads the allowed signers the settings name.
func (s Settings) Verifier() (*Verifier, error) {
	v := &Verifier{allowedFrom: s.AllowedSigners, program: s.Program}
	var ok bool
	if v.minTrust, ok = gpgTrust[strings.ToUpper(cmp.Or(s.MinTrust, "undefined"))]; !ok {
		return nil, fmt.Errorf("git's gpg.minTrustLevel %q is none of undefined, never, marginal, fully, ultimate", s.MinTrust)
	}
	if s.AllowedSigners != "" {
		data, err := os.ReadFile(s.AllowedSigners)
		if err != nil {
			return nil, fmt.Errorf("read git's gpg.ssh.allowedSignersFile: %w", err)
		}
		if v.allowed, err = parseAllowedSigners(data); err != nil {
			return nil, fmt.Errorf("%s: %w", s.AllowedSigners, err)
		}
	}
	return v, nil
}

// Check checks signature, armored as git keeps it, over payload, the commit as git
// encodes it without its signature; when is the commit's committer time, which an
// allowed signer's valid-after and valid-before are held against.
func (v *Verifier) Check(payload, signature []byte, when time.Time) Check {
	switch {
	case len(signature) == 0:
		return Check{Status: Unsigned}
	case bytes.HasPrefix(signature, []byte("-----BEGIN SSH SIGNATURE-----")):
		return v.checkSSH(payload, signature, when)
	case bytes.HasPrefix(signature, []byte("-----BEGIN PGP SIGNATURE-----")):
		return v.checkGPG(payload, signature)
	}
	return Check{Status: Bad, Reason: "a signature of a kind agmem cannot check"}
}

func (v *Verifier) checkSSH(payload, signature []byte, when time.Time) Check {
	c := Check{Format: "ssh"}
	sig, err := sshsig.Unarmor(signature)
	if err != nil {
		c.Status, c.Reason = Bad, "unreadable SSH signature: "+err.Error()
		return c
	}
	c.Key = ssh.FingerprintSHA256(sig.PublicKey)
	if err := sshsig.Verify(bytes.NewReader(payload), sig, sig.PublicKey, sig.HashAlgorithm, sshNamespace); err != nil {
		c.Status, c.Reason = Bad, "the signature does not match the commit: "+err.Error()
		return c
	}
	if v.allowedFrom == "" {
		c.Status, c.Reason = Unknown, "git's gpg.ssh.allowedSignersFile is not set"
		return c
	}
	for _, a := range v.allowed {
		if a.allows(sig.PublicKey, when) {
			c.Status, c.Signer = Good, a.principals
			return c
		}
	}
	c.Status, c.Reason = Unknown, "the key is not an allowed signer in "+v.allowedFrom
	return c
}

// gpgTrust orders gpg's trust levels, as git does for gpg.minTrustLevel.
var gpgTrust = map[string]int{"NEVER": 0, "UNDEFINED": 1, "MARGINAL": 2, "FULLY": 3, "ULTIMATE": 4}

// checkGPG has gpg check an OpenPGP signature, as git does: the signature in a file,
// the payload on stdin, gpg's status lines read. Good is a good signature by a key of
// the keyring trusted at least gpg.minTrustLevel; gpg fetches no key (offline).
func (v *Verifier) checkGPG(payload, signature []byte) Check {
	c := Check{Format: "openpgp"}
	f, err := os.CreateTemp("", "agmem-sig-*")
	if err != nil {
		c.Status, c.Reason = Bad, err.Error()
		return c
	}
	defer os.Remove(f.Name())
	_, err = f.Write(signature)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		c.Status, c.Reason = Bad, err.Error()
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), gpgTimeout)
	defer cancel()
	var status bytes.Buffer
	cmd := exec.CommandContext(ctx, v.program, "--status-fd=1", "--keyid-format=long",
		"--keyserver-options", "no-auto-key-retrieve", "--verify", f.Name(), "-")
	cmd.Stdin, cmd.Stdout = bytes.NewReader(payload), &status
	runErr := cmd.Run()
	c.Status, c.Reason = Bad, "gpg could not check it"
	if runErr != nil {
		c.Reason += ": " + runErr.Error()
	}
	trust := gpgTrust["UNDEFINED"] // gpg says nothing of trust: as git, undefined
	sc := bufio.NewScanner(&status)
	for sc.Scan() {
		fields := strings.Fields(strings.TrimPrefix(sc.Text(), "[GNUPG:] "))
		if len(fields) < 2 {
			continue
		}
		switch fields[0] {
		case "GOODSIG":
			c.Key, c.Signer = fields[1], strings.Join(fields[2:], " ")
			if runErr == nil {
				c.Status, c.Reason = Good, ""
			}
		case "BADSIG":
			c.Key, c.Status, c.Reason = fields[1], Bad, "the signature does not match the commit"
			return c
		case "ERRSIG", "NO_PUBKEY":
			c.Key, c.Status, c.Reason = fields[1], Unknown, "the key is not in gpg's keyring"
			return c
		case "EXPKEYSIG", "REVKEYSIG":
			c.Key, c.Status, c.Reason = fields[1], Unknown, "the key is expired or revoked"
			return c
		default:
			if level, ok := gpgTrust[strings.TrimPrefix(fields[0], "TRUST_")]; ok && strings.HasPrefix(fields[0], "TRUST_") {
				trust = level
			}
		}
	}
	if c.Status == Good && trust < v.minTrust {
		c.Status, c.Reason = Unknown, "the key is trusted less than git's gpg.minTrustLevel"
	}
	return c
}

// allowedSigner is one line of an allowed signers file (ssh-keygen(1), ALLOWED
// SIGNERS): principals, options, a public key.
type allowedSigner struct {
	principals  string
	key         ssh.PublicKey
	namespaces  []string // empty: any
	validAfter  time.Time
	validBefore time.Time
}

// allows reports whether the line lets pub sign a git commit made at when.
func (a allowedSigner) allows(pub ssh.PublicKey, when time.Time) bool {
	if !bytes.Equal(a.key.Marshal(), pub.Marshal()) {
		return false
	}
	if len(a.namespaces) > 0 && !matchPatternList(sshNamespace, a.namespaces) {
		return false
	}
	return (a.validAfter.IsZero() || !when.Before(a.validAfter)) && (a.validBefore.IsZero() || when.Before(a.validBefore))
}

// parseAllowedSigners reads an allowed signers file. Lines marked cert-authority
// (keys that sign certificates, not commits), and lines with an option ssh-keygen does
// not know (which it refuses), allow nothing and are skipped.
func parseAllowedSigners(data []byte) ([]allowedSigner, error) {
	var all []allowedSigner
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		fields := splitUnquoted(line, func(r rune) bool { return r == ' ' || r == '\t' })
		if len(fields) < 3 {
			return nil, fmt.Errorf("line %d: want principals, options and a key", n+1)
		}
		a := allowedSigner{principals: strings.Trim(fields[0], `"`)}
		rest := fields[1:]
		if !isKeyType(rest[0]) {
			skip, err := a.options(rest[0])
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", n+1, err)
			}
			if skip {
				continue
			}
			rest = rest[1:]
		}
		if len(rest) < 2 {
			return nil, fmt.Errorf("line %d: no key", n+1)
		}
		key, _, _, _, err := ssh.ParseAuthorizedKey([]byte(rest[0] + " " + rest[1]))
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n+1, err)
		}
		a.key = key
		all = append(all, a)
	}
	return all, nil
}

// options reads a line's options; it reports whether the line allows nothing: a
// cert-authority's, or one with an option ssh-keygen does not know.
func (a *allowedSigner) options(s string) (skip bool, err error) {
	for _, opt := range splitUnquoted(s, func(r rune) bool { return r == ',' }) {
		name, value, _ := strings.Cut(opt, "=")
		value = strings.Trim(value, `"`)
		switch strings.ToLower(name) {
		case "namespaces":
			a.namespaces = strings.Split(value, ",")
		case "valid-after":
			a.validAfter, err = signerTime(value)
		case "valid-before":
			a.validBefore, err = signerTime(value)
		default: // cert-authority, or an option ssh-keygen refuses
			skip = true
		}
		if err != nil {
			return false, fmt.Errorf("option %s: %v", name, err)
		}
	}
	return skip, nil
}

// matchPatternList reports whether name matches a list of patterns as OpenSSH's
// match_pattern_list does: "*" and "?" wildcards, a pattern starting "!" negated; a
// negated match rejects whatever else matches.
func matchPatternList(name string, patterns []string) bool {
	matched := false
	for _, p := range patterns {
		if neg, ok := strings.CutPrefix(p, "!"); ok {
			if matchPattern(name, neg) {
				return false
			}
		} else if matchPattern(name, p) {
			matched = true
		}
	}
	return matched
}

// matchPattern matches name against one pattern of "*" (any run) and "?" (any one).
func matchPattern(name, p string) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			for i := len(name); i >= 0; i-- {
				if matchPattern(name[i:], p[1:]) {
					return true
				}
			}
			return false
		case '?':
			if name == "" {
				return false
			}
		default:
			if name == "" || name[0] != p[0] {
				return false
			}
		}
		name, p = name[1:], p[1:]
	}
	return name == ""
}

// signerTime reads ssh-keygen's YYYYMMDD[HHMM[SS]][Z] (local time unless Z).
func signerTime(s string) (time.Time, error) {
	loc := time.Local
	if t, ok := strings.CutSuffix(s, "Z"); ok {
		s, loc = t, time.UTC
	}
	for _, layout := range []string{"20060102150405", "200601021504", "20060102"} {
		if len(s) == len(layout) {
			return time.ParseInLocation(layout, s, loc)
		}
	}
	return time.Time{}, fmt.Errorf("%q is not YYYYMMDD[HHMM[SS]][Z]", s)
}

func isKeyType(s string) bool {
	return strings.HasPrefix(s, "ssh-") || strings.HasPrefix(s, "ecdsa-") || strings.HasPrefix(s, "sk-")
}

// splitUnquoted splits s at the runes sep says, outside double quotes, dropping empty
// fields.
func splitUnquoted(s string, sep func(rune) bool) []string {
	var fields []string
	start, quoted := 0, false
	for i, r := range s {
		switch {
		case r == '"':
			quoted = !quoted
		case sep(r) && !quoted:
			if i > start {
				fields = append(fields, s[start:i])
			}
			start = i + 1
		}
	}
	if start < len(s) {
		fields = append(fields, s[start:])
	}
	return fields
}
