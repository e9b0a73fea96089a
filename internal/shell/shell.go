// Package shell is the little of POSIX sh that agmem writes and reads back: a word
// quoted for sh (the commands agmem puts in agents' hooks and in service files), and a
// command split back into its words, for the quoting Quote writes and the plain words
// people type.
package shell

import "strings"

// Quote quotes s as one word for a POSIX shell, whatever it holds: in single quotes,
// where a single quote of s ends them, stands escaped with a backslash and opens them again.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Readable is s as one word for sh, quoted only where sh needs it: for a command shown
// to a person.
func Readable(s string) string {
	if s != "" && !strings.ContainsAny(s, " '\"\\$`!*?&;|<>()[]{}~#") {
		return s
	}
	return Quote(s)
}

// Words splits a command as sh would, for the quoting Quote writes and the plain
// words people type; it refuses anything else a shell would read as more than words
// (pipes, substitutions, variables, redirections).
func Words(s string) ([]string, bool) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, w.String()), false
				w.Reset()
			}
			continue
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, false
			}
			w.WriteString(s[i+1 : i+1+end])
			i += end + 1
		case c == '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				} else if strings.IndexByte("$`", s[i]) >= 0 {
					return nil, false
				}
				w.WriteByte(s[i])
			}
			if i == len(s) {
				return nil, false
			}
		case c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
		case strings.IndexByte("|&;<>()$`*?[#\n", c) >= 0:
			return nil, false
		default:
			w.WriteByte(c)
		}
		inWord = true
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, true
}
