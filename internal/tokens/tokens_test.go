package tokens

import (
	"strings"
	"testing"
)

func TestCount(t *testing.T) {
	for _, c := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"the report of the analysis", 7}, // the, repo|rt, of, the, anal|ysis: from above (cl100k and o200k: five)
		{"cartTotal", 3},
		{"HTTPServer", 3},
		{"1733456789", 4},
		{"a  b\n\nc", 5},
		{"xqzvjk", 6},     // no pair of them common: random letters are a token for every one or two
		{"kubernetes", 4}, // k|uber|nete|s: words run on, by fours
		{"\n\t\n\t", 4},   // white space of more than one kind
		{"1 2", 3},        // a space before a digit is a token of its own
		{strings.Repeat(" ", 40), 3},
		{`{"a":1}`, 7},
		{"日本語", 9},
		{"🙂", 4},
		{"é", 2},
	} {
		if got := Count(c.text); got != c.want {
			t.Errorf("Count(%q) = %d, want %d", c.text, got, c.want)
		}
	}
}

// End cuts where a token ends, and never inside a character; what it keeps counts at
// most what was asked.
func TestEnd(t *testing.T) {
	texts := []string{"the report of the analysis", "日本語のテキスト", "a🙂b🙂c", strings.Repeat(`{"ts":1733,"msg":"GET /api"} `, 20)}
	for _, text := range texts {
		for n := 0; n <= Count(text)+1; n++ {
			end := End(text, n)
			if kept := text[:end]; Count(kept) > n || !strings.HasPrefix(text, kept) || (end < len(text) && end > 0 && text[end]&0xC0 == 0x80) {
				t.Fatalf("End(%q, %d) = %d: %q counts %d", text, n, end, kept, Count(kept))
			}
			if n >= Count(text) && end != len(text) {
				t.Errorf("End(%q, %d) = %d, want all %d", text, n, end, len(text))
			}
		}
	}
}

// BenchmarkCount counts a kilobyte of a JSON log, as the index counts each entry's.
func BenchmarkCount(b *testing.B) {
	text := strings.Repeat(`{"ts":1733456789,"lvl":"info","msg":"GET /api/v1/orders/123 200 12ms"}`+"\n", 14)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Count(text)
	}
}
