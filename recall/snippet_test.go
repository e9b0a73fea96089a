package recall

import (
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
		{"日本語 テスト", []string{"テスト"}, "日本語 **テスト**"},
		{"ÜBERPRÜFUNG läuft", []string{"uber*"}, "**ÜBERPRÜFUNG** läuft"},
		{"k" + strings.Repeat("x", 70) + " end", []string{"k" + strings.Repeat("x", 63)}, "**k" + strings.Repeat("x", 70) + "** end"},
	} {
		got, ok := around(c.text, c.words)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("around(%q, %q) = %q, %v; want %q", c.text, c.words, got, ok, c.want)
		}
	}
}
