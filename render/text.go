package render

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agmem/agmem/internal/hint"
)

// oneLine makes input text fit on one line of a heading or a commit message: control
// characters and those that mislead (hint.Misleads: the Unicode line and paragraph
// separators, a bidirectional override that would reverse what git log shows after it,
// invisible format characters) become spaces, invalid UTF-8 becomes U+FFFD.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || hint.Misleads(r) {
			return ' '
		}
		return r
	}, s)
}

// blockText prepares text for a fenced block: line endings become '\n' (agmem's files
// never hold '\r'), and NUL and invalid UTF-8 become U+FFFD, as CommonMark asks of NUL.
func blockText(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch r {
		case '\r':
			return '\n'
		case 0:
			return utf8.RuneError
		}
		return r
	}, s)
}

// preview keeps the first n runes of s, and says so when it cut.
func preview(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos] + "\n... (truncated)"
		}
		i++
	}
	return s
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}
