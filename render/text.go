package render

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// oneLine makes input text fit on one line of a heading or a commit message: control
// characters and the Unicode line and paragraph separators become spaces, invalid UTF-8
// becomes U+FFFD. (What the markdown files hold stays as it was: audit renders each
// committed observation again and compares the bytes.)
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
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
