package memory

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agmem/agmem/internal/hint"
)

// Ids are ULIDs (github.com/ulid/spec): 48 bits of Unix milliseconds, then 80 of
// entropy, in 26 characters of Crockford's base32. They are made here rather than by
// github.com/oklog/ulid: its package seeds a math/rand source when any process that
// links it starts, and its monotonic reader fills 4 KiB of entropy to use ten bytes,
// together about a tenth of a millisecond of every hook's process (BENCHMARKS.md).
const (
	ulidLen     = 26
	crockford   = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	maxULIDTime = 1<<48 - 1
)

var (
	entropyMu   sync.Mutex
	lastMS      uint64 = maxULIDTime + 1 // no id made yet
	lastEntropy [10]byte
)

// NewID returns a ULID for something that happened at t: ids sort by time, and ids made
// in one process for the same millisecond still sort in the order they were made (the
// entropy of the one before, plus one). It panics for a time past the year 10889.
func NewID(t time.Time) string {
	ms := ulidTime(t)
	if ms > maxULIDTime {
		panic("ulid: time too big")
	}
	entropyMu.Lock()
	defer entropyMu.Unlock()
	if ms == lastMS {
		if !increment(lastEntropy[:]) {
			panic("ulid: monotonic entropy overflow")
		}
		return encodeULID(ms, lastEntropy[:])
	}
	lastMS = ms
	// math/rand/v2's generator, ChaCha8 seeded by the runtime from the system's
	// randomness: unique enough for ids, where crypto/rand's first read sets up a
	// timer and the vDSO's state (a tenth of a millisecond of every hook's process).
	binary.BigEndian.PutUint64(lastEntropy[:8], rand.Uint64())
	binary.BigEndian.PutUint16(lastEntropy[8:], uint16(rand.Uint64()))
	return encodeULID(ms, lastEntropy[:])
}

// increment adds one to a big-endian number, and says false if it overflowed.
func increment(b []byte) bool {
	for i := len(b) - 1; i >= 0; i-- {
		b[i]++
		if b[i] != 0 {
			return true
		}
	}
	return false
}

// IDOf returns the ULID of something that happened at t and is known by content: the
// same content at the same time always gets the same id, so that importing a record
// twice keeps it once.
func IDOf(t time.Time, content []byte) string {
	sum := sha256.Sum256(content)
	ms := ulidTime(t)
	if ms > maxULIDTime {
		ms = 0 // as oklog/ulid's SetTime leaves a time it refuses
	}
	return encodeULID(ms, sum[:10])
}

// ulidTime is t in the milliseconds a ULID holds.
func ulidTime(t time.Time) uint64 {
	return uint64(t.Unix())*1000 + uint64(t.Nanosecond()/int(time.Millisecond))
}

// encodeULID spells a ULID: 130 bits, the first two zero, five to a character, taken
// from the end.
func encodeULID(ms uint64, entropy []byte) string {
	hi := ms<<16 | uint64(binary.BigEndian.Uint16(entropy)) // 48 bits of time, then entropy
	lo := binary.BigEndian.Uint64(entropy[2:])
	var out [ulidLen]byte
	for i := ulidLen - 1; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}

// NormalizeID accepts an id given in input (a ULID, or a UUID such as the Python agmem
// writes) and returns its canonical spelling. Any other id is refused: ids become part of
// file names, and two spellings of one id must never name two files.
func NormalizeID(s string) (string, error) {
	if len(s) == ulidLen {
		if up := strings.ToUpper(s); isULID(up) {
			return up, nil
		}
	}
	if isUUID(s) {
		return strings.ToLower(s), nil
	}
	return "", fmt.Errorf("id %q is neither a ULID nor a UUID", truncate(s, 40))
}

// isULID says whether s is a ULID in its canonical spelling: 26 of Crockford's
// upper-case characters, the first at most 7 (a larger one is past 128 bits).
func isULID(s string) bool {
	if len(s) != ulidLen || s[0] > '7' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(crockford, s[i]) < 0 {
			return false
		}
	}
	return true
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
// first twelve hex digits of a UUID (and all of a shorter id, which a record fetched
// from another repo may hold).
func ShortID(id string) string {
	if len(id) == ulidLen {
		return strings.ToLower(id[ulidLen-12:])
	}
	s := strings.ReplaceAll(id, "-", "")
	return s[:min(len(s), 12)]
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

// CheckNewSessionID is CheckSessionID for a session id agmem is given now, and refuses
// too an id that would not be shown as it is (hint.Block: a line separator, a character
// that is invisible or reorders a line), or that the Agmem-Session trailer could not
// carry as it is (one line, trimmed, UTF-8): such a session would be committed under
// another name than its record's, which verify and audit then report for good, or be
// listed as another id than the one to type. A record written before is read by
// CheckSessionID alone.
func CheckNewSessionID(s string) error {
	if err := CheckSessionID(s); err != nil {
		return err
	}
	switch {
	case !utf8.ValidString(s):
		return fmt.Errorf("session id %q is not UTF-8", truncate(s, 40))
	case hint.Block(s) != s:
		return fmt.Errorf("session id %q holds a line separator, or a character that is invisible or reorders a line", truncate(s, 40))
	case strings.TrimSpace(s) != s:
		return fmt.Errorf("session id %q starts or ends with white space", truncate(s, 40))
	}
	return nil
}

// SessionIDHint is the advice for a session id CheckNewSessionID refuses.
const SessionIDHint = "pass a session id of visible characters on one line, without white space at its ends"

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
