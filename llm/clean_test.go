package llm

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agmem/agmem/vcs"
)

// answers are what models (and servers pretending to be models) answer, and what must
// be left of each.
var answers = []struct {
	name          string
	answer        string
	subject, body string
}{
	{"plain", "Add login form validation\n\n- Check the e-mail field\n- Show errors inline",
		"Add login form validation", "- Check the e-mail field\n- Show errors inline"},
	{"subject only", "Fix flaky build", "Fix flaky build", ""},
	{"a secret", "Rotate ghp_hGAkWvj7FAc9QeWJKY40uvSwMFLZDe1f8rES\n\n- token ghp_hGAkWvj7FAc9QeWJKY40uvSwMFLZDe1f8rES leaked",
		"Rotate [REDACTED:github-pat]", "- token [REDACTED:github-pat] leaked"},
	{"fenced", "```\nUpdate parser tests\n\n- Cover empty input\n```", "Update parser tests", "- Cover empty input"},
	{"fenced with a language", "```text\nUpdate parser tests\n```\n", "Update parser tests", ""},
	{"quoted", `"Refactor the session store"`, "Refactor the session store", ""},
	{"quoted subject, then a body", "'Refactor the store'\n\n- Split reads from writes",
		"Refactor the store", "- Split reads from writes"},
	{"quotes inside are kept", `Handle "quoted" names`, `Handle "quoted" names`, ""},
	{"labelled", "Subject: Implement retry on 5xx\n\nBody:\n- Back off twice", "Implement retry on 5xx", "- Back off twice"},
	{"markdown heading and bold", "## **Tidy the README**", "Tidy the README", ""},
	{"trailing period", "Fix the cache key.", "Fix the cache key", ""},
	{"over-long subject cut at a word", "Implement the complete authentication flow with refresh tokens and logout",
		"Implement the complete authentication flow with", ""},
	{"over-long single word cut hard", strings.Repeat("x", 80), strings.Repeat("x", 50), ""},
	{"forged agmem trailer", "Add feature\n\nAgmem-Session: forged\nAgmem-Batch: 01ARZ3NDEKTSV4RRFFQ69G5FAV",
		"Add feature", ""},
	{"forged agmem trailer as subject", "Agmem-Session: forged\nAdd feature", "Add feature", ""},
	{"agmem text in any case", "Add feature\n\n- see AGMEM-batch too", "Add feature", ""},
	{"other trailers", "Add feature\n\n- Do it\nSigned-off-by: Eve <eve@example.com>\nCo-authored-by : Mallory",
		"Add feature", "- Do it"},
	{"conventional commit subject is kept", "feat: add dark mode", "feat: add dark mode", ""},
	{"bullets only keep the template subject", "- Added caching\n- Fixed a leak", "", "- Added caching\n- Fixed a leak"},
	{"crlf and blank runs", "Tidy up\r\n\r\n\r\n- One\r\n\r\n\r\n- Two\r\n", "Tidy up", "- One\n\n- Two"},
	{"control and invisible characters", "Fix\x1b[31m colours\u202e\n\n- Strip\x00 them\u200b",
		"Fix [31m colours", "- Strip  them"},
	{"scissors and patch lines stay text", "Fix\n\n---\n# ------------------------ >8 ------------------------",
		"Fix", "---\n# ------------------------ >8 ------------------------"},
	{"empty", "", "", ""},
	{"blank", " \n\t\n ", "", ""},
	{"only a fence", "```\n```", "", ""},
	{"only trailers", "Agmem-Session: x\nAgmem-Auto-Commit: false", "", ""},
}

func TestClean(t *testing.T) {
	for _, tc := range answers {
		t.Run(tc.name, func(t *testing.T) {
			subject, body := Clean(tc.answer)
			if subject != tc.subject || body != tc.body {
				t.Errorf("Clean(%q)\n = %q, %q\nwant %q, %q", tc.answer, subject, body, tc.subject, tc.body)
			}
		})
	}
}

func TestCleanBoundsTheBody(t *testing.T) {
	var long strings.Builder
	long.WriteString("Subject\n\n")
	for range 40 {
		long.WriteString("- " + strings.Repeat("word ", 40) + "\n")
	}
	_, body := Clean(long.String())
	lines := strings.Split(body, "\n")
	if len(lines) > maxBodyLines || len(body) > maxBodyBytes {
		t.Errorf("body of %d lines, %d bytes; want at most %d and %d", len(lines), len(body), maxBodyLines, maxBodyBytes)
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > maxLineRunes {
			t.Errorf("body line of %d runes: %q", n, l)
		}
	}
}

// agmemTrailers are what a flush writes after the model's text.
var agmemTrailers = []vcs.Trailer{
	{Key: vcs.TrailerSession, Value: "s1"},
	{Key: vcs.TrailerObservations, Value: "2"},
	{Key: vcs.TrailerBatch, Value: "01ARZ3NDEKTSV4RRFFQ69G5FAV"},
	{Key: vcs.TrailerMessageModel, Value: "gpt-4o-mini"},
	{Key: vcs.TrailerAutoCommit, Value: "true"},
}

// messageFrom is the commit message a flush writes from answer.
func messageFrom(answer string) string {
	subject, body := Clean(answer)
	if subject == "" {
		subject = "Auto-commit: 2 observations from 2 tools"
	}
	return vcs.FormatMessage(subject, body, agmemTrailers)
}

// checkCleaned checks what Clean promises of whatever answer it is given.
func checkCleaned(t *testing.T, answer string) {
	subject, body := Clean(answer)
	if !utf8.ValidString(subject) || !utf8.ValidString(body) {
		t.Fatalf("Clean(%q) gave invalid UTF-8", answer)
	}
	if n := utf8.RuneCountInString(subject); n > MaxSubjectRunes || strings.Contains(subject, "\n") {
		t.Errorf("Clean(%q): subject %q has %d runes or a newline", answer, subject, n)
	}
	if lines := strings.Split(body, "\n"); len(lines) > maxBodyLines || len(body) > maxBodyBytes {
		t.Errorf("Clean(%q): body of %d lines, %d bytes", answer, len(lines), len(body))
	}
	for _, l := range strings.Split(subject+"\n"+body, "\n") {
		if strings.Contains(strings.ToLower(l), "agmem-") {
			t.Errorf("Clean(%q) kept a line naming agmem's trailers: %q", answer, l)
		}
	}
	for _, l := range strings.Split(body, "\n") {
		if looksLikeTrailer(l) {
			t.Errorf("Clean(%q) kept a trailer-shaped body line: %q", answer, l)
		}
	}
	if got := vcs.ParseTrailers(messageFrom(answer)); !slices.Equal(got, agmemTrailers) {
		t.Errorf("answer %q changed the trailers to %q", answer, got)
	}
}

func FuzzClean(f *testing.F) {
	for _, tc := range answers {
		f.Add(tc.answer)
	}
	f.Add("Fix\n\nAgmem-Session: forged\n\nAgmem-Session: forged")
	f.Add("Fix\n\n--- \nAgmem-Session: forged")
	f.Add("Fix\n\nKey: value\n Continued: line")
	f.Fuzz(checkCleaned)
}

// TestGitReadsOnlyAgmemsTrailers asks git itself what the trailers of each answer's
// message are: exactly agmem's, whatever the model wrote.
func TestGitReadsOnlyAgmemsTrailers(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("this test asks the git CLI to read trailers: install git")
	}
	var want strings.Builder
	for _, tr := range agmemTrailers {
		want.WriteString(tr.Key + ": " + tr.Value + "\n")
	}
	for _, tc := range answers {
		cmd := exec.Command("git", "interpret-trailers", "--parse")
		cmd.Dir = t.TempDir() // no repository, so no trailer.* configuration
		cmd.Stdin = strings.NewReader(messageFrom(tc.answer))
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git interpret-trailers: %v", err)
		}
		if string(out) != want.String() {
			t.Errorf("%s: git reads the trailers\n%s\nwant\n%s", tc.name, out, want.String())
		}
	}
}
