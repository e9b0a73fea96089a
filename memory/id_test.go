package memory

import (
	"crypto/sha256"
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
)

func TestNormalizeID(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"ULID upper stays", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "01ARZ3NDEKTSV4RRFFQ69G5FAV"},
		{"ULID lower becomes upper", "01arz3ndektsv4rrffq69g5fav", "01ARZ3NDEKTSV4RRFFQ69G5FAV"},
		{"ULID mixed case becomes upper", "01aRz3NdEkTsV4rRfFq69G5fAv", "01ARZ3NDEKTSV4RRFFQ69G5FAV"},
		{"ULID largest", "7ZZZZZZZZZZZZZZZZZZZZZZZZZ", "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"},
		{"UUID lower stays", "123e4567-e89b-42d3-a456-426614174000", "123e4567-e89b-42d3-a456-426614174000"},
		{"UUID upper becomes lower", "123E4567-E89B-42D3-A456-426614174000", "123e4567-e89b-42d3-a456-426614174000"},
		{"UUID mixed case becomes lower", "AbCdEf01-2345-6789-aBcD-eF0123456789", "abcdef01-2345-6789-abcd-ef0123456789"},
		{"UUIDv7", "018f6b2e-9c3a-7d4e-8f00-0123456789ab", "018f6b2e-9c3a-7d4e-8f00-0123456789ab"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NormalizeID(tt.in)
			if err != nil {
				t.Fatalf("NormalizeID(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("NormalizeID(%q) = %q, want %q", tt.in, got, tt.want)
			}
			// Canonical means a fixed point: normalizing twice changes nothing.
			again, err := NormalizeID(got)
			if err != nil || again != got {
				t.Errorf("NormalizeID(%q) = %q, %v; a canonical id must normalize to itself", got, again, err)
			}
		})
	}
}

func TestNormalizeIDRefuses(t *testing.T) {
	tests := []struct {
		name string
		in   string
	}{
		{"empty", ""},
		{"path traversal", "../../x"},
		{"26-char path traversal", "../../../../../../../etc/x"},
		{"36-char path traversal", "../../../../../../../../../../../../"},
		{"26 chars with U (not Crockford)", "01ARZ3NDEKTSV4RRFFQ69G5FAU"},
		{"26 chars with I (not Crockford)", "01ARZ3NDEKTSV4RRFFQ69G5FAI"},
		{"26 chars with L (not Crockford)", "01ARZ3NDEKTSV4RRFFQ69G5FAL"},
		{"26 chars with O (not Crockford)", "01ARZ3NDEKTSV4RRFFQ69G5FAO"},
		{"26 chars with punctuation", "01ARZ3NDEKTSV4RRFFQ69G5FA-"},
		{"26 chars with a slash", "01ARZ3NDEKTSV4RRFFQ69G5F/V"},
		{"26 chars overflowing 128 bits", "80000000000000000000000000"},
		{"25 chars", "01ARZ3NDEKTSV4RRFFQ69G5FA"},
		{"27 chars", "01ARZ3NDEKTSV4RRFFQ69G5FAVV"},
		{"36 chars with non-hex", "g23e4567-e89b-42d3-a456-426614174000"},
		{"36 chars with hyphen moved", "123e4567e-89b-42d3-a456-426614174000"},
		{"36 chars without hyphens", "123e4567ae89ba42d3aa456a426614174000"},
		{"36 chars with a slash", "123e4567-e89b-42d3-a456/426614174000"},
		{"UUID without hyphens", "123e4567e89b42d3a456426614174000"},
		{"UUID in braces", "{123e4567-e89b-42d3-a456-426614174000}"},
		{"UUID with spaces", " 123e4567-e89b-42d3-a456-42661417400 "},
		{"36 bytes of non-ASCII", strings.Repeat("é", 18)},
		{"26 bytes of non-ASCII", strings.Repeat("é", 13)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := NormalizeID(tt.in); err == nil {
				t.Errorf("NormalizeID(%q) = %q, want an error", tt.in, got)
			}
		})
	}
}

func TestShortID(t *testing.T) {
	tests := []struct {
		id, want string
	}{
		{"01ARZ3NDEKTSV4RRFFQ69G5FAV", "rrffq69g5fav"},
		{"123e4567-e89b-42d3-a456-426614174000", "123e4567e89b"},
		{"a-b-c", "abc"}, // no id agmem writes, but a fetched record may hold it
		{"", ""},
	}
	for _, tt := range tests {
		if got := ShortID(tt.id); got != tt.want {
			t.Errorf("ShortID(%q) = %q, want %q", tt.id, got, tt.want)
		}
	}
}

func TestShortIDOfFreshIDsIsUniqueAtOneInstant(t *testing.T) {
	const n = 10000
	at := time.Date(2025, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	seen := make(map[string]string, n)
	for range n {
		id := NewID(at)
		short := ShortID(id)
		if len(short) != 12 {
			t.Fatalf("ShortID(%q) = %q: %d characters, want 12", id, short, len(short))
		}
		if short != strings.ToLower(short) {
			t.Fatalf("ShortID(%q) = %q, want lower case (file names on case-insensitive disks)", id, short)
		}
		if prev, ok := seen[short]; ok {
			t.Fatalf("ShortID(%q) = ShortID(%q) = %q", id, prev, short)
		}
		seen[short] = id
	}
}

func TestNewIDIsMonotonicWithinOneMillisecond(t *testing.T) {
	at := time.Date(2025, 6, 7, 8, 9, 10, 11_000_000, time.UTC)
	prev := ""
	for i := range 5000 {
		id := NewID(at)
		parsed, err := ulid.ParseStrict(id)
		if err != nil {
			t.Fatalf("NewID gave %q, not a ULID: %v", id, err)
		}
		if got := ulid.Time(parsed.Time()); !got.Equal(at.Truncate(time.Millisecond)) {
			t.Fatalf("NewID(%s) carries time %s", at, got)
		}
		if norm, err := NormalizeID(id); err != nil || norm != id {
			t.Fatalf("NormalizeID(NewID()) = %q, %v; want %q unchanged", norm, err, id)
		}
		if i > 0 && id <= prev {
			t.Fatalf("id %d %q does not sort after id %d %q", i, id, i-1, prev)
		}
		prev = id
	}
}

func TestNewIDSortsByTime(t *testing.T) {
	t0 := time.Date(2025, 6, 7, 8, 9, 10, 0, time.UTC)
	later := NewID(t0.Add(time.Millisecond))
	// Made afterwards but for an earlier time: still sorts first.
	earlier := NewID(t0)
	if earlier >= later {
		t.Errorf("NewID(t0) = %q does not sort before NewID(t0+1ms) = %q", earlier, later)
	}
}

func TestCheckSessionID(t *testing.T) {
	tests := []struct {
		name string
		id   string
		ok   bool
	}{
		{"uuid", "0b7e4d2c-8a31-4f6e-b5c9-1d2e3f4a5b6c", true},
		{"plain words", "native-demo", true},
		{"spaces and punctuation", "my session: #1 (retry)", true},
		{"unicode", "séance-日本語-🚀", true},
		{"exactly 200 bytes", strings.Repeat("a", MaxSessionIDLen), true},
		{"200 bytes of multi-byte runes", strings.Repeat("é", MaxSessionIDLen/2), true},
		{"empty", "", false},
		{"201 bytes", strings.Repeat("a", MaxSessionIDLen+1), false},
		{"201 bytes, fewer runes", strings.Repeat("é", 100) + "a", false},
		{"NUL", "a\x00b", false},
		{"newline", "a\nb", false},
		{"carriage return", "a\rb", false},
		{"tab", "a\tb", false},
		{"escape", "a\x1b[31mb", false},
		{"DEL", "a\x7fb", false},
		{"C1 control", "a\u0085b", false},
		{"only a newline", "\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckSessionID(tt.id)
			if tt.ok && err != nil {
				t.Errorf("CheckSessionID(%q) = %v, want ok", tt.id, err)
			}
			if !tt.ok && err == nil {
				t.Errorf("CheckSessionID(%q) = nil, want an error", tt.id)
			}
		})
	}
}

func TestIDOf(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	a, b := IDOf(at, []byte("line")), IDOf(at, []byte("line"))
	if a != b || IDOf(at, []byte("other")) == a || IDOf(at.Add(time.Second), []byte("line")) == a {
		t.Errorf("IDOf is not a function of time and content: %s %s", a, b)
	}
	if n, err := NormalizeID(a); err != nil || n != a {
		t.Errorf("IDOf gives %s, not a canonical ULID (%v)", a, err)
	}
}

// FuzzULIDAsOklog checks the ids made here against github.com/oklog/ulid, which agmem
// used before: the same spelling of a time and entropy, the same IDOf, and NormalizeID
// accepting exactly the 26-character strings its strict parser takes, spelled alike.
func FuzzULIDAsOklog(f *testing.F) {
	f.Add(uint64(0), []byte{}, "01ARZ3NDEKTSV4RRFFQ69G5FAV")
	f.Add(uint64(maxULIDTime), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, "7zzzzzzzzzzzzzzzzzzzzzzzzz")
	f.Add(uint64(maxULIDTime+1), []byte("entropy!!!"), "80000000000000000000000000")
	f.Add(uint64(1735787045006), []byte("0123456789"), "01arz3ndektsv4rrffq69g5fau")
	f.Add(uint64(1<<63), []byte("x"), "0ILOU00000000000000000000é")
	f.Fuzz(func(t *testing.T, ms uint64, entropy []byte, s string) {
		var e [10]byte
		copy(e[:], entropy)
		held := ms & maxULIDTime // a time a ULID can hold
		var spelled ulid.ULID
		spelled.SetTime(held)
		spelled.SetEntropy(e[:])
		if got := encodeULID(held, e[:]); got != spelled.String() {
			t.Fatalf("encodeULID(%d, %x) = %s, oklog/ulid spells %s", held, e, got, spelled)
		}
		// A quarter of the times past a ULID's last millisecond, which IDOf leaves zero.
		at := time.UnixMilli(int64(ms % (1 << 50))).Add(time.Duration(len(entropy)) * time.Microsecond)
		sum := sha256.Sum256(entropy)
		var want ulid.ULID
		want.SetTime(ulid.Timestamp(at))
		want.SetEntropy(sum[:10])
		if got := IDOf(at, entropy); got != want.String() {
			t.Fatalf("IDOf(%s, %x) = %s, oklog/ulid gives %s", at, entropy, got, want)
		}
		if len(s) != ulidLen {
			return
		}
		got, err := NormalizeID(s)
		parsed, perr := ulid.ParseStrict(strings.ToUpper(s))
		switch {
		case (err == nil) != (perr == nil):
			t.Fatalf("NormalizeID(%q) = %q, %v; oklog/ulid's ParseStrict: %v", s, got, err, perr)
		case err == nil && got != parsed.String():
			t.Fatalf("NormalizeID(%q) = %q, oklog/ulid spells it %q", s, got, parsed)
		}
	})
}
