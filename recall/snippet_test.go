package recall

import "testing"

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
	} {
		got, ok := around(c.text, c.words)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("around(%q, %q) = %q, %v; want %q", c.text, c.words, got, ok, c.want)
		}
	}
}
