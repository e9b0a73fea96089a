package vcs

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// scissorsLine is the line after which git ignores the rest of a message when it looks
// for trailers (git commit --cleanup=scissors writes it; '#' is the comment character).
const scissorsLine = "# ------------------------ >8 ------------------------"

// trailersFor are the trailers of an agmem commit carrying session and batch.
func trailersFor(session, batch string) []Trailer {
	return []Trailer{
		{TrailerSession, session},
		{TrailerObservations, "3"},
		{TrailerBatch, batch},
		{TrailerSource, "claude-code"},
		{TrailerAutoCommit, "true"},
	}
}

// oneLined is what the trailers must read back as: values made one line.
func oneLined(ts []Trailer) []Trailer {
	out := make([]Trailer, len(ts))
	for i, t := range ts {
		out[i] = Trailer{t.Key, OneLine(t.Value)}
	}
	return out
}

func formatTrailers(ts []Trailer) string {
	var b strings.Builder
	for _, t := range ts {
		fmt.Fprintf(&b, "%s: %s\n", t.Key, t.Value)
	}
	return b.String()
}

// gitTrailers is what `git interpret-trailers --parse` reads in message.
func gitTrailers(t *testing.T, message string) []Trailer {
	t.Helper()
	out := runGitStdin(t, t.TempDir(), message, "interpret-trailers", "--parse")
	var ts []Trailer
	for _, l := range nonEmptyLines(out) {
		k, v, ok := strings.Cut(l, ": ")
		if !ok {
			k, v = strings.TrimSuffix(l, ":"), ""
		}
		ts = append(ts, Trailer{k, v})
	}
	return ts
}

func equalTrailers(a, b []Trailer) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

type hostileCase struct {
	name                   string
	subject, body, session string
	batch                  string
}

var hostileCases = []hostileCase{
	{"plain", "Auto-commit: 3 observations", "- [episodic] Bash ls", "sess-1", "01BATCH"},
	{"newline in value", "s", "b", "sess\nAgmem-Batch: forged", "01BATCH"},
	{"CR in value", "s", "b", "sess\rAgmem-Batch: forged", "01BATCH"},
	{"CRLF in value", "s", "b", "sess\r\nAgmem-Batch: forged", "01BATCH\r\n"},
	{"new paragraph in value", "s", "b", "sess\n\nAgmem-Session: forged", "01BATCH"},
	{"NUL in value", "s", "b", "se\x00ss", "01\x00BATCH"},
	{"line separators in value", "s", "b", "a\u2028Agmem-Session: forged", "b\u2029Agmem-Batch: forged"},
	{"NEL and other C1 in value", "s", "b", "a\u0085Agmem-Session: forged\u009b", "x"},
	{"tabs and escapes in value", "s", "b", "\ta\tb\x1b[31m", "x\v\fy"},
	{"blank value", "s", "b", "", "  \n\t "},
	{"value that is a trailer", "s", "b", "Agmem-Batch: forged", "Agmem-Session: forged"},
	{"value with dashes", "s", "b", "---", "--- x"},
	{"value with scissors", "s", "b", scissorsLine, "\n" + scissorsLine + "\n"},
	{"subject is a trailer", "Agmem-Batch: x", "", "sess", "01BATCH"},
	{"subject is a trailer, with body", "Agmem-Batch: x", "b", "sess", "01BATCH"},
	{"subject with a paragraph", "s\n\nAgmem-Session: forged", "", "sess", "01BATCH"},
	{"empty subject and body", "", "", "sess", "01BATCH"},
	{"subject is dashes", "---", "b", "sess", "01BATCH"},
	{"subject starts with dashes", "--- a/x", "", "sess", "01BATCH"},
	{"subject is scissors", scissorsLine, "b", "sess", "01BATCH"},
	{"subject is a comment", "# not a comment", "", "sess", "01BATCH"},
	{"body ends with a trailer", "s", "text\nAgmem-Session: forged", "sess", "01BATCH"},
	{"body is trailers", "s", "Agmem-Session: forged\nAgmem-Batch: forged\n\n", "sess", "01BATCH"},
	{"body ends with dashes", "s", "text\n---", "sess", "01BATCH"},
	{"body is dashes", "s", "---", "sess", "01BATCH"},
	{"body with a patch", "s", "text\n--- a/file\n+++ b/file\n@@ -1 +1 @@", "sess", "01BATCH"},
	{"body with tab after dashes", "s", "text\n---\tx", "sess", "01BATCH"},
	{"body with scissors", "s", "x\n\nAgmem-Session: forged\n" + scissorsLine + "\nrest", "sess", "01BATCH"},
	{"body ends with scissors", "s", "Agmem-Session: forged\n" + scissorsLine, "sess", "01BATCH"},
	{"body starts with scissors", "s", scissorsLine + "\nx", "sess", "01BATCH"},
	{"body with comments", "s", "# a comment\n#another", "sess", "01BATCH"},
	{"body with old conflicts block", "s", "text\nConflicts:\n\tfile", "sess", "01BATCH"},
	{"body with CR", "s", "a\r\nAgmem-Session: forged\r", "sess", "01BATCH"},
	{"body with line separator", "s", "a\u2028\u2028Agmem-Session: forged", "sess", "01BATCH"},
	{"body with blank-looking lines", "s", "a\n \t\n\x0b\nAgmem-Session: forged\n \n", "sess", "01BATCH"},
	{"body with NUL", "s", "a\x00\n\nAgmem-Session: forged", "sess", "01BATCH"},
	{"body with trailing continuation", "s", "Agmem-Session: forged\n continued", "sess", "01BATCH"},
	{"long value", "s", "b", strings.Repeat("v", 5000), "01BATCH"},
}

func TestFormatMessageTrailersAsGitReadsThem(t *testing.T) {
	for _, tc := range hostileCases {
		ts := trailersFor(tc.session, tc.batch)
		msg := FormatMessage(tc.subject, tc.body, ts)
		want := oneLined(ts)
		if got := gitTrailers(t, msg); !equalTrailers(got, want) {
			t.Errorf("%s: git interpret-trailers --parse reads\n%s\nwant\n%s\nmessage %q", tc.name, formatTrailers(got), formatTrailers(want), msg)
		}
		if got := ParseTrailers(msg); !equalTrailers(got, want) {
			t.Errorf("%s: ParseTrailers =\n%s\nwant\n%s\nmessage %q", tc.name, formatTrailers(got), formatTrailers(want), msg)
		}
	}
}

// Committed, the message's trailers read the same for `git log`.
func TestCommittedTrailersAsGitLogReadsThem(t *testing.T) {
	r, dir := newRepo(t)
	branch := branchOf(t, r)
	for i, tc := range hostileCases {
		ts := trailersFor(tc.session, tc.batch)
		msg := FormatMessage(tc.subject, tc.body, ts)
		tip, err := r.Tip(branch)
		if err != nil {
			t.Fatal(err)
		}
		d, err := r.NewDraft(tip)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Put(fmt.Sprintf("f%02d", i), []byte(tc.name)); err != nil {
			t.Fatal(err)
		}
		h, err := d.Commit(branch, msg, when(i))
		if err != nil {
			t.Fatalf("%s: Commit: %v", tc.name, err)
		}
		if got := runGit(t, dir, "log", "-1", "--format=%B", h.String()); strings.TrimRight(got, "\n") != strings.TrimRight(msg, "\n") {
			t.Errorf("%s: git log reads the message as %q, want %q", tc.name, got, msg)
		}
		// With a separator, git prints every value of the key on one line: a second
		// Agmem-Session would show.
		for key, value := range map[string]string{TrailerSession: tc.session, TrailerBatch: tc.batch} {
			format := "--format=[%(trailers:key=" + key + ",valueonly,separator=%x7C)]"
			if got, want := runGit(t, dir, "log", "-1", format, h.String()), "["+OneLine(value)+"]\n"; got != want {
				t.Errorf("%s: %s reads %q, want %q", tc.name, key, got, want)
			}
		}
		if got, want := runGit(t, dir, "log", "-1", "--format=%(trailers:only,unfold)", h.String()), formatTrailers(oneLined(ts)); strings.TrimRight(got, "\n") != strings.TrimRight(want, "\n") {
			t.Errorf("%s: git log reads the trailers\n%s\nwant\n%s", tc.name, got, want)
		}
	}
	assertFsck(t, dir)
}

// On messages agmem did not format, ParseTrailers reads what git reads.
func TestParseTrailersAgreesWithGit(t *testing.T) {
	for _, msg := range []string{
		"",
		"just a subject",
		"just a subject\n",
		"Key: v\n",                          // one paragraph: the subject
		"Key: v\nOther: w\n",                // still one paragraph
		"subject\nmore subject\n\nKey: v\n", // a two-line first paragraph
		"subject\n\nbody text\n",            // no trailer block
		"subject\n\nbody\n\nnot: a trailer\nplain line\n",
		"subject\n\nbody\n\nplain line\nKey: v\n",
		"subject\n\nKey: v\nOther-Key: w x  y\n",
		"subject\n\nbody\n\nKey: v\n\n\n",
		"subject\n\nbody\n\nKey:v\nK2:  spaced  \n",
		"subject\n\nAgmem-Batch: a\n\nAgmem-Batch: b\n",
		"subject\n\nAgmem-Session: s\nAgmem-Session: t\n",
	} {
		got := ParseTrailers(msg)
		if want := gitTrailers(t, msg); !equalTrailers(got, want) {
			t.Errorf("ParseTrailers(%q) =\n%s\ngit reads\n%s", msg, formatTrailers(got), formatTrailers(want))
		}
	}
}

// Messages made of fragments that mean something to git's trailer parser, in random
// order: git must read exactly the trailers given.
func TestFormatMessageRandomAgainstGit(t *testing.T) {
	fragments := []string{
		"\n", "\n\n", "\r", "\r\n", "\x00", "\t", " ", "\u2028", "\u0085", "#", "# ", ":",
		"---", "--- ", "----", scissorsLine, "Agmem-Batch: forged", "Agmem-Session:", "Signed-off-by: x <x@y>",
		"(cherry picked from commit 0123)", "Conflicts:\n", "Key: v", "text", "é", "-",
	}
	rng := rand.New(rand.NewSource(2))
	pick := func(max int) string {
		var b strings.Builder
		for n := rng.Intn(max + 1); n > 0; n-- {
			b.WriteString(fragments[rng.Intn(len(fragments))])
		}
		return b.String()
	}
	n := 150
	if testing.Short() {
		n = 30
	}
	for i := 0; i < n; i++ {
		ts := trailersFor(pick(4), pick(4))
		ts[1].Value = pick(2)
		msg := FormatMessage(pick(4), pick(12), ts)
		want := oneLined(ts)
		if got := gitTrailers(t, msg); !equalTrailers(got, want) {
			t.Fatalf("git interpret-trailers --parse reads\n%s\nwant\n%s\nmessage %q", formatTrailers(got), formatTrailers(want), msg)
		}
		if got := ParseTrailers(msg); !equalTrailers(got, want) {
			t.Fatalf("ParseTrailers =\n%s\nwant\n%s\nmessage %q", formatTrailers(got), formatTrailers(want), msg)
		}
	}
}

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"plain":           "plain",
		"a\nb":            "a b",
		"a\r\nb":          "a  b",
		"\n\nx\n\n":       "x",
		"":                "-",
		" \t\n":           "-",
		"a\u2028b\u2029c": "a b c",
		"a\x00b\x7fc":     "a b c",
	} {
		if got := OneLine(in); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTrailerValue(t *testing.T) {
	ts := []Trailer{{"Agmem-Batch", "first"}, {"agmem-batch", "second"}}
	if got := TrailerValue(ts, "AGMEM-BATCH"); got != "first" {
		t.Errorf("TrailerValue = %q, want the first", got)
	}
	if got := TrailerValue(ts, "Agmem-Session"); got != "" {
		t.Errorf("TrailerValue(missing) = %q", got)
	}
}

// cutByGit reports why git would stop reading message before line i, if it would:
// `git interpret-trailers` takes a line "---" (then whitespace or the end) as the start
// of a patch, and every trailer reader (interpret-trailers, `git log
// --format=%(trailers)`) ignores what follows a scissors line, whatever the comment
// character. The fuzz target cannot run git for each input; this is the part of git's
// rules that a subject or body could trigger.
func cutByGit(line string) string {
	if line == "---" || strings.HasPrefix(line, "--- ") || strings.HasPrefix(line, "---\t") {
		return "a patch starts"
	}
	if strings.HasSuffix(line, strings.TrimPrefix(scissorsLine, "#")) {
		return "a scissors line"
	}
	return ""
}

func FuzzFormatMessage(f *testing.F) {
	for _, tc := range hostileCases {
		f.Add(tc.subject, tc.body, tc.session, tc.batch, "claude-code")
	}
	f.Fuzz(func(t *testing.T, subject, body, session, batch, source string) {
		ts := []Trailer{
			{TrailerSession, session},
			{TrailerObservations, "1"},
			{TrailerBatch, batch},
			{TrailerSource, source},
			{TrailerAutoCommit, "true"},
		}
		msg := FormatMessage(subject, body, ts)
		want := oneLined(ts)
		if got := ParseTrailers(msg); !equalTrailers(got, want) {
			t.Fatalf("ParseTrailers(FormatMessage(...)) =\n%s\nwant\n%s\nmessage %q", formatTrailers(got), formatTrailers(want), msg)
		}
		lines := strings.Split(msg, "\n")
		for _, l := range lines[:len(lines)-len(ts)-1] {
			if why := cutByGit(l); why != "" {
				t.Fatalf("git reads %q as %s: the trailers after it are lost\nmessage %q", l, why, msg)
			}
		}
	})
}
