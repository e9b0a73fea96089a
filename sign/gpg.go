package sign

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/agmem/agmem/internal/hint"
)

// gpgTimeout bounds one run of gpg: a pinentry waiting for a passphrase nobody types
// must not hold a flush for ever.
const gpgTimeout = 20 * time.Second

// gpgSign signs payload by running program as git does: "--status-fd=2 -bsau <key>",
// the payload on stdin and the armored signature on stdout, good only when gpg's
// status says it made one.
func gpgSign(program, key string, payload []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), gpgTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, program, "--status-fd=2", "-bsau", key)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(payload), &stdout, &stderr
	err := cmd.Run()
	if err == nil && !bytes.Contains(stderr.Bytes(), []byte("\n[GNUPG:] SIG_CREATED ")) &&
		!bytes.HasPrefix(stderr.Bytes(), []byte("[GNUPG:] SIG_CREATED ")) {
		err = errors.New("gpg made no signature")
	}
	if err != nil {
		return nil, hint.With(fmt.Errorf("%s could not sign with key %q: %v: %s", program, key, err, lastLine(stderr.String())),
			`check "gpg --list-secret-keys" and git's user.signingKey`)
	}
	return stdout.Bytes(), nil
}

// lastLine is the last non-empty line of what a program said that is not a status line.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" && !strings.HasPrefix(l, "[GNUPG:]") {
			return l
		}
	}
	return ""
}
