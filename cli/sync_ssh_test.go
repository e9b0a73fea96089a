package cli_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

// sshGitServer serves git over ssh on 127.0.0.1 as sshd with git-shell would: it takes
// one client key and runs the git-upload-pack or git-receive-pack the client asks for.
type sshGitServer struct {
	addr     string
	hostLine string // its line for known_hosts
}

func startSSHGitServer(t *testing.T, client ssh.PublicKey) *sshGitServer {
	t.Helper()
	_, hostKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(hostKey)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &ssh.ServerConfig{PublicKeyCallback: func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
		if string(key.Marshal()) != string(client.Marshal()) {
			return nil, errors.New("unknown key")
		}
		return nil, nil
	}}
	cfg.AddHostKey(signer)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go serveSSH(conn, cfg)
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	return &sshGitServer{addr: l.Addr().String(),
		hostLine: fmt.Sprintf("[127.0.0.1]:%d %s", port, strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey()))))}
}

func serveSSH(conn net.Conn, cfg *ssh.ServerConfig) {
	_, chans, reqs, err := ssh.NewServerConn(conn, cfg)
	if err != nil {
		return
	}
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		ch, requests, err := nc.Accept()
		if err != nil {
			continue
		}
		go func() {
			defer ch.Close()
			for req := range requests {
				var execReq struct{ Command string }
				if req.Type != "exec" || ssh.Unmarshal(req.Payload, &execReq) != nil ||
					!(strings.HasPrefix(execReq.Command, "git-upload-pack ") || strings.HasPrefix(execReq.Command, "git-receive-pack ")) {
					req.Reply(false, nil)
					continue
				}
				req.Reply(true, nil)
				cmd := exec.Command("sh", "-c", execReq.Command)
				cmd.Stdin, cmd.Stdout, cmd.Stderr = ch, ch, ch.Stderr()
				status := 0
				if err := cmd.Run(); err != nil {
					status = 1
				}
				ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{uint32(status)}))
				return
			}
		}()
	}
}

// testSSH: push and pull over ssh:// with [sync] ssh_key, the host checked against
// known_hosts; an unknown host is refused with a hint.
func testSSH(t *testing.T) {
	root := t.TempDir()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "agmem test")
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(root, "id_ed25519")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	clientKey, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	srv := startSSHGitServer(t, clientKey)
	remote := filepath.Join(root, "memory.git")
	git(t, root, "init", "-q", "--bare", remote)
	knownHosts := filepath.Join(root, "known_hosts")
	env := []string{"AGMEM_SYNC_SSH_KEY=" + keyFile, "SSH_KNOWN_HOSTS=" + knownHosts, "SSH_AUTH_SOCK="}
	url := "ssh://git@" + srv.addr + remote

	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, dir := range []string{a, b} {
		mustAgmem(t, root, "", "init", dir)
		git(t, dir, "remote", "add", "origin", url)
	}
	ids := lines(mustAgmem(t, a, observations(2, 1, "ssh"), "record", "--jsonl"))
	mustAgmem(t, a, "", "flush")

	if err := os.WriteFile(knownHosts, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = agmem(t, a, env, "", "push")
	if err == nil || !strings.Contains(err.Error(), "agmem: hint: check the host, then add its key") {
		t.Errorf("push to a host not in known_hosts: %v", err)
	}

	if err := os.WriteFile(knownHosts, []byte(srv.hostLine+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := mustAgmemEnv(t, a, env, "push"); !strings.HasPrefix(out, "pushed main") {
		t.Errorf("push over ssh: %q", out)
	}
	if out := mustAgmemEnv(t, b, env, "pull"); !strings.Contains(out, ": new, at ") {
		t.Errorf("pull over ssh: %q", out)
	}
	if got, _ := onRemote(t, remote); len(got) != len(ids) {
		t.Errorf("the remote has %d observations, want %d", len(got), len(ids))
	}
	if out := mustAgmem(t, b, "", "replay", "--session", "s0"); !strings.Contains(out, "read_file path=ssh-1.md") {
		t.Errorf("replay of the session pulled over ssh:\n%s", out)
	}
}
