package llm

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agmem/agmem/redact"
)

const (
	// MaxSubjectRunes is the longest subject a model may write, as the prompt asks.
	MaxSubjectRunes = 50
	maxBodyLines    = 15
	maxBodyBytes    = 1000
	maxLineRunes    = 100
	maxAnswerBytes  = 16 << 10 // read of an answer; a commit message needs far less
)

// Clean takes the subject and body of a commit message from a model's answer, keeping
// nothing agmem does not trust:
//
//   - code fences, quotes around the answer or the subject, a "Subject:" label and
//     markdown heading marks go; so do control and invisible formatting characters;
//   - a line with any "Agmem-" text goes, wherever it is;
//   - a body line shaped like a trailer ("Token: value", as git reads one) goes (the
//     subject is a paragraph of its own, which git never reads as trailers, and keeps
//     its "fix: …" form);
//   - the subject is cut to 50 runes at a word boundary, each body line to 100, and the
//     body to 15 lines and 1000 bytes;
//   - a secret is redacted (redact.Default): the model saw none, but a server that
//     answers as one may write one.
//
// The subject is "" when the answer has none (its first line is a bullet, or nothing
// is left): the caller keeps its own. Both "" means nothing usable is left.
func Clean(answer string) (subject, body string) {
	answer, _ = redact.Default().Text(answer[:min(len(answer), maxAnswerBytes)])
	lines := answerLines(answer)
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	if len(lines) > 0 && !isBullet(lines[0]) {
		subject = cleanSubject(lines[0])
		lines = lines[1:]
	}
	return subject, cleanBody(lines)
}

// answerLines is the answer as lines of plain text, without fences, quotes around the
// whole, or any line that names an agmem trailer.
func answerLines(answer string) []string {
	answer = strings.ToValidUTF8(answer[:min(len(answer), maxAnswerBytes)], "")
	answer = strings.ReplaceAll(answer, "\r\n", "\n")
	answer = strings.Map(func(r rune) rune {
		switch {
		case r == '\n':
			return r
		case r == '\r' || r == '\u2028' || r == '\u2029':
			return '\n'
		case unicode.IsControl(r):
			return ' '
		case unicode.Is(unicode.Cf, r): // zero-width and bidi marks: text that shows other than it reads
			return -1
		}
		return r
	}, answer)
	var kept []string
	for _, line := range strings.Split(answer, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") ||
			strings.Contains(strings.ToLower(trimmed), "agmem-") {
			continue
		}
		kept = append(kept, strings.TrimRightFunc(line, unicode.IsSpace))
	}
	return strings.Split(unquote(strings.TrimSpace(strings.Join(kept, "\n"))), "\n")
}

// subjectLabels are what models put before a subject although told not to.
var subjectLabels = []string{"subject:", "commit message:", "title:"}

func cleanSubject(line string) string {
	s := strings.TrimSpace(line)
	if heading := strings.TrimLeft(s, "#"); strings.HasPrefix(heading, " ") {
		s = strings.TrimSpace(heading)
	}
	for _, label := range subjectLabels {
		if len(s) >= len(label) && strings.EqualFold(s[:len(label)], label) {
			s = strings.TrimSpace(s[len(label):])
			break
		}
	}
	if inner, ok := strings.CutPrefix(s, "**"); ok {
		s, _ = strings.CutSuffix(inner, "**")
	}
	s = strings.TrimRight(unquote(strings.TrimSpace(s)), ". ")
	return cutWords(s, MaxSubjectRunes)
}

func cleanBody(lines []string) string {
	var out []string
	size := 0
	for _, line := range lines {
		if looksLikeTrailer(line) {
			continue
		}
		line = cutWords(line, maxLineRunes)
		if line == "" && (len(out) == 0 || out[len(out)-1] == "") {
			continue // no leading blank line, no two in a row
		}
		if len(out) == maxBodyLines || size+len(line)+1 > maxBodyBytes {
			break
		}
		out = append(out, line)
		size += len(line) + 1
	}
	return strings.TrimRight(strings.Join(out, "\n"), "\n")
}

// looksLikeTrailer says whether git could read line as a trailer if it were in the last
// paragraph: a token of letters, digits and '-', then optional blanks and a ':'.
func looksLikeTrailer(line string) bool {
	line = strings.TrimLeft(line, " ")
	i := 0
	for i < len(line) && isTokenByte(line[i]) {
		i++
	}
	if i == 0 {
		return false
	}
	rest := strings.TrimLeft(line[i:], " ")
	return strings.HasPrefix(rest, ":")
}

func isTokenByte(c byte) bool {
	return c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isBullet(line string) bool {
	s := strings.TrimSpace(line)
	return strings.HasPrefix(s, "- ") || strings.HasPrefix(s, "* ") || strings.HasPrefix(s, "• ") || s == "-" || s == "*"
}

// quotePairs are the quotes a model puts around an answer or a subject.
var quotePairs = [][2]string{{`"`, `"`}, {"'", "'"}, {"`", "`"}, {"“", "”"}, {"‘", "’"}, {"«", "»"}}

// unquote takes away one pair of quotes around s, when nothing between them closes them.
func unquote(s string) string {
	for _, q := range quotePairs {
		open, end := q[0], q[1]
		if len(s) >= len(open)+len(end) && strings.HasPrefix(s, open) && strings.HasSuffix(s, end) {
			if inner := s[len(open) : len(s)-len(end)]; !strings.Contains(inner, end) {
				return strings.TrimSpace(inner)
			}
		}
	}
	return s
}

// cutWords keeps at most n runes of s, cutting at the last space when there is one in
// the second half, and leaves no space or dangling punctuation at the end.
func cutWords(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	cut := cutRunes(s, n)
	if next, _ := utf8.DecodeRuneInString(s[len(cut):]); next != ' ' {
		if i := strings.LastIndexByte(cut, ' '); i >= len(cut)/2 {
			cut = cut[:i]
		}
	}
	return strings.TrimRight(cut, " ,;:-")
}
