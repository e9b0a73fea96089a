package sign

import (
	"crypto/ed25519"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// newKey writes a new ed25519 key without a passphrase to dir/name, as ssh-keygen
// does, and returns its public key.
func newKey(t *testing.T, dir, name string) ssh.PublicKey {
	t.Helper()
	path := filepath.Join(dir, name)
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	data, err := os.ReadFile(path + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey(data)
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

func authorized(pub ssh.PublicKey) string {
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub)))
}

func TestFromGitReadsGitsSettings(t *testing.T) {
	config := map[string]string{}
	setting := func(name string) string { return config[name] }
	if s := FromGit(Auto, setting, "Ana <ana@example.com>", "/repo"); s.On() || s.Format != "openpgp" || s.Program != "gpg" {
		t.Errorf("no git settings: %+v, want off, openpgp through gpg", s)
	}
	config["commit.gpgSign"] = "yes"
	config["gpg.format"] = "SSH"
	config["user.signingKey"] = "keys/id_ed25519"
	config["gpg.ssh.allowedSignersFile"] = "/etc/allowed"
	s := FromGit("", setting, "Ana <ana@example.com>", "/repo")
	if s.Mode != BestEffort || s.Format != "ssh" || s.Key != "/repo/keys/id_ed25519" || s.AllowedSigners != "/etc/allowed" {
		t.Errorf("commit.gpgSign and ssh: %+v", s)
	}
	config["user.signingKey"] = "key::ssh-ed25519 AAAA"
	if s := FromGit(Off, setting, "", "/repo"); s.On() || s.Key != "key::ssh-ed25519 AAAA" {
		t.Errorf("off, a literal key: %+v", s)
	}
	delete(config, "gpg.format")
	config["gpg.program"] = "/usr/local/bin/gpg2"
	config["gpg.ssh.program"] = "op-ssh-sign"
	if s := FromGit(Required, setting, "", "/repo"); s.Mode != Required || s.Program != "/usr/local/bin/gpg2" {
		t.Errorf("required, gpg.program: %+v", s)
	}
}

// TestSignedIsCheckedAgainstTheAllowedSigners signs with a key file as a flush does and
// checks the signature: good for the commit it signs, bad for any other, of an unknown
// key when the key is not allowed (or only for another namespace, or not yet).
func TestSignedIsCheckedAgainstTheAllowedSigners(t *testing.T) {
	dir := t.TempDir()
	pub := newKey(t, dir, "ana")
	signer, err := Settings{Mode: Required, Format: "ssh", Key: filepath.Join(dir, "ana")}.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer signer.Close()
	payload := []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor a <a@b> 1 +0000\ncommitter a <a@b> 1 +0000\n\nx\n")
	sig, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	when := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	check := func(allowed string) Check {
		t.Helper()
		path := filepath.Join(dir, "allowed")
		if err := os.WriteFile(path, []byte(allowed), 0o644); err != nil {
			t.Fatal(err)
		}
		v, err := Settings{AllowedSigners: path}.Verifier()
		if err != nil {
			t.Fatal(err)
		}
		return v.Check(payload, sig, when)
	}
	key := authorized(pub)
	if c := check("# the team\n\"ana@example.com,ana@work\" " + key + "\n"); c.Status != Good || c.Signer != "ana@example.com,ana@work" || c.Format != "ssh" {
		t.Errorf("allowed: %+v", c)
	}
	if c := check(`ana@example.com namespaces="file,git",valid-after="20260101" ` + key + "\n"); c.Status != Good {
		t.Errorf("allowed for git among others, from a date: %+v", c)
	}
	if c := check(`ana@example.com namespaces="fi*,g?t" ` + key + "\n"); c.Status != Good {
		t.Errorf("allowed for namespaces by pattern: %+v", c)
	}
	for name, allowed := range map[string]string{
		"another namespace":   `ana@example.com namespaces="file" ` + key,
		"git negated":         `ana@example.com namespaces="*,!git" ` + key,
		"an unknown option":   `ana@example.com valid-befor="20200101" ` + key,
		"not yet valid":       `ana@example.com valid-after="20270101Z" ` + key,
		"no longer valid":     `ana@example.com valid-before="202612010000" ` + key,
		"a certificate's key": `ana@example.com cert-authority ` + key,
		"another key":         `bob@example.com ` + authorized(newKey(t, dir, "bob")),
	} {
		if c := check(allowed + "\n"); c.Status != Unknown {
			t.Errorf("%s: %+v, want %s", name, c, Unknown)
		}
	}
	v, err := Settings{}.Verifier()
	if err != nil {
		t.Fatal(err)
	}
	if c := v.Check(payload, sig, when); c.Status != Unknown || !strings.Contains(c.Reason, "allowedSignersFile is not set") {
		t.Errorf("no allowed signers file: %+v", c)
	}
	if c := v.Check(append([]byte("x"), payload...), sig, when); c.Status != Bad {
		t.Errorf("another payload: %+v, want bad", c)
	}
	if c := v.Check(payload, nil, when); c.Status != Unsigned {
		t.Errorf("no signature: %+v", c)
	}
	if c := v.Check(payload, []byte("-----BEGIN SSH SIGNATURE-----\nbm9uc2Vuc2U=\n-----END SSH SIGNATURE-----\n"), when); c.Status != Bad {
		t.Errorf("a signature that is not one: %+v", c)
	}
}

// TestSignatureForAnotherNamespaceIsBad: a signature ssh-keygen made for files is not
// one of a commit, though the key is allowed.
func TestSignatureForAnotherNamespaceIsBad(t *testing.T) {
	dir := t.TempDir()
	pub := newKey(t, dir, "ana")
	payload := filepath.Join(dir, "payload")
	if err := os.WriteFile(payload, []byte("commit bytes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("ssh-keygen", "-Y", "sign", "-n", "file", "-f", filepath.Join(dir, "ana"), payload).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen -Y sign: %v\n%s", err, out)
	}
	sig, err := os.ReadFile(payload + ".sig")
	if err != nil {
		t.Fatal(err)
	}
	allowed := filepath.Join(dir, "allowed")
	if err := os.WriteFile(allowed, []byte("ana@example.com "+authorized(pub)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := Settings{AllowedSigners: allowed}.Verifier()
	if err != nil {
		t.Fatal(err)
	}
	if c := v.Check([]byte("commit bytes\n"), sig, time.Now()); c.Status != Bad {
		t.Errorf("a file signature as a commit's: %+v, want bad", c)
	}
}

func TestAllowedSignersThatDoNotReadAreErrors(t *testing.T) {
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	key, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		"ana@example.com",
		"ana@example.com ssh-ed25519",
		"ana@example.com ssh-ed25519 bm90IGEga2V5",
		`ana@example.com valid-after="tomorrow" ` + authorized(key),
	} {
		if _, err := parseAllowedSigners([]byte(bad + "\n")); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// BenchmarkSign is what signing one commit costs in itself, an ed25519 key file opened
// once per flush, as a flush does, and a commit's worth of bytes signed.
func BenchmarkSign(b *testing.B) {
	dir := b.TempDir()
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, "key")).CombinedOutput(); err != nil {
		b.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	payload := []byte(strings.Repeat("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n", 20))
	for b.Loop() {
		signer, err := Settings{Format: "ssh", Key: filepath.Join(dir, "key")}.Open()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := signer.Sign(payload); err != nil {
			b.Fatal(err)
		}
		signer.Close()
	}
}
