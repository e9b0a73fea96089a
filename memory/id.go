package memory

import (
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/oklog/ulid/v2"
)

var (
	entropyMu sync.Mutex
	entropy   = ulid.Monotonic(rand.Reader, 0)
)

// NewID returns a ULID for something that happened at t: ids sort by time, and ids made
// in one process for the same millisecond still sort in the order they were made.
func NewID(t time.Time) string {
	entropyMu.Lock()
	defer entropyMu.Unlock()
	return ulid.MustNew(ulid.Timestamp(t), entropy).String()
}

// IDOf returns the ULID of something that happened at t and is known by content: the
// same content at the same time always gets the same id, so that importing a record
// twice keeps it once.
func IDOf(t time.Time, content []byte) string {
	sum := sha256.Sum256(content)
	var id ulid.ULID
	id.SetTime(ulid.Timestamp(t))
	id.SetEntropy(sum[:10])
	return id.String()
}

// NormalizeID accepts an id given in input (a ULID, or a UUID such as the Python agmem
// writes) and returns its canonical spelling. Any other id is refused: ids become part of
// file names, and two spellings of one id must never name two files.
func NormalizeID(s string) (string, error) {
	if len(s) == ulid.EncodedSize {
		if id, err := ulid.ParseStrict(strings.ToUpper(s)); err == nil {
			return id.String(), nil
		}
	}
	if isUUID(s) {
		return strings.ToLower(s), nil
	}
	return "", fmt.Errorf("id %q is neither a ULID nor a UUID", truncate(s, 40))
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
				return false
			}
		}
	}
	return true
}

// ShortID is the part of an id that file names carry: the random tail of a ULID, the
// first twelve hex digits of a UUID.
func ShortID(id string) string {
	if len(id) == ulid.EncodedSize {
		return strings.ToLower(id[ulid.EncodedSize-12:])
	}
	return strings.ReplaceAll(id, "-", "")[:12]
}

// MaxSessionIDLen bounds a session id: it travels into paths, trailers and keys.
const MaxSessionIDLen = 200

// CheckSessionID refuses a session id that is empty, too long, or holds control
// characters (which would break journal keys and commit trailers).
func CheckSessionID(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("session id is empty")
	case len(s) > MaxSessionIDLen:
		return fmt.Errorf("session id is longer than %d bytes", MaxSessionIDLen)
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return fmt.Errorf("session id %q holds a control character", truncate(s, 40))
		}
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
