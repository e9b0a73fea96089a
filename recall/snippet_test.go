package recall

import (
	"fmt"
	"strings"
	"testing"
)

// A snippet marks the words the index matched: whole words, or a prefix's whole words;
// never a word that only starts like one.
func TestAroundMarksWholeWords(t *testing.T) {
	for _, c := range []struct {
		text  string
		words []string
		want  string
	}{
		{"the state is locked; the lock is stale", []string{"lock"}, "the state is locked; the **lock** is stale"},
		{"the state is locked; the lock is stale", []string{"lock*"}, "the state is **locked**; the **lock** is stale"},
		{"Locked\n\tby  pid 42", []string{"locked", "pid"}, "**Locked** by **pid** 42"},
		{"unlock", []string{"lock"}, ""},
		{"state-lock.md", []string{"state", "lock"}, "**state**-**lock**.md"},
		// As the index reads words: case and diacritics aside, whatever the script.
		{"the Café serves crème brûlée", []string{"cafe", "creme"}, "the **Café** serves **crème** brûlée"},
		{"日本語 テスト", []string{"テス", "スト"}, "日本語 **テスト**"},
		{"これは日本語テキストです", []string{"テキ", "キス", "スト"}, "これは日本語**テキスト**です"},
		{"U\u0308berpru\u0308fung failed", []string{"uberprufung"}, "**U\u0308berpru\u0308fung** failed"},
		// Nothing in it drives a terminal, whoever shows it (the CLI, MCP, the viewer).
		{"boom \x1b[2J\x1b]0;pwned\x07 \u202eevil\u200b", []string{"boom"}, "**boom** [2J ]0;pwned evil"},
		{"ÜBERPRÜFUNG läuft", []string{"uber*"}, "**ÜBERPRÜFUNG** läuft"},
		{"k" + strings.Repeat("x", 70) + " end", []string{"k" + strings.Repeat("x", 63)}, "**k" + strings.Repeat("x", 70) + "** end"},
		// A word the snippet's ends cut through is no match.
		{"xcat " + strings.Repeat("y", 48) + " cat here", []string{"cat"}, "…cat " + strings.Repeat("y", 48) + " **cat** here"},
		{"cat " + strings.Repeat("b", snippetRunes-8) + " category", []string{"cat"}, "**cat** " + strings.Repeat("b", snippetRunes-8) + " cat…"},
	} {
		got, ok := around(c.text, c.words)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("around(%q, %q) = %q, %v; want %q", c.text, c.words, got, ok, c.want)
		}
	}
}

// TestFirstMatchASCII: in a text all ASCII, firstMatch finds what reading it term by
// term finds (a text that is not takes that way).
func TestFirstMatchASCII(t *testing.T) {
	long := strings.Repeat("q", 70)
	texts := []string{"the lock_file is locked; LOCK it", "unlock relock lock2 lock", "Parse_Config parse config",
		"a " + long + " b", "x" + long + " " + long[:64], "9lives lives 99", "end with lock"}
	words := [][]string{{"lock"}, {"lock*"}, {"config", "parse"}, {long[:64]}, {"lives"}, {"99"}, {"zebra"}}
	for _, text := range texts {
		for _, w := range words {
			if got, want := firstMatch(text, w), firstMatch(text+" é", w); got != want {
				t.Errorf("firstMatch(%q, %q) = %d, term by term %d", text, w, got, want)
			}
		}
	}
}

// BenchmarkAround cuts a snippet of a result of about a kilobyte, as most are, and of
// one of 100 KB, each matched near its end: what a search pays for each hit it shows.
func BenchmarkAround(b *testing.B) {
	for _, size := range []int{1 << 10, 100 << 10} {
		text := strings.Repeat("the handler returns\tan error when\nthe state is locked; ", size/52) + "stale lock"
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			for b.Loop() {
				if _, ok := around(text, []string{"stale"}); !ok {
					b.Fatal("no match")
				}
			}
		})
	}
}
