package vcs

import (
	"regexp"
	"strings"
	"unicode"
)

// Trailer keys agmem writes. They are a contract: FORMAT.md §Trailers.
const (
	TrailerSession      = "Agmem-Session"
	TrailerObservations = "Agmem-Observations"
	TrailerEvents       = "Agmem-Events"
	TrailerBatch        = "Agmem-Batch"
	TrailerSource       = "Agmem-Source"
	TrailerAutoCommit   = "Agmem-Auto-Commit"
	// TrailerRedactions counts the secrets redacted from the commit's entries.
	TrailerRedactions = "Agmem-Redactions"
	// TrailerMessageModel names the model that wrote the message, or "template".
	TrailerMessageModel = "Agmem-Message-Model"
)

// Trailer is one "Key: value" line of a commit message's final paragraph.
type Trailer struct{ Key, Value string }

// FormatMessage joins a subject, a body and a trailer block into a commit message. The
// subject and body are made unable to pose as trailers or to end the message early: the
// subject becomes one line, and the body keeps its lines but loses blank-looking control
// characters. Trailer values become one line each.
func FormatMessage(subject, body string, trailers []Trailer) string {
	var b strings.Builder
	b.WriteString(notAnEnd(OneLine(subject)))
	b.WriteString("\n\n")
	if body = strings.TrimSpace(cleanBody(body)); body != "" {
		for _, line := range strings.Split(body, "\n") {
			b.WriteString(notAnEnd(line))
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	for _, t := range trailers {
		b.WriteString(t.Key)
		b.WriteString(": ")
		b.WriteString(OneLine(t.Value))
		b.WriteByte('\n')
	}
	return b.String()
}

// OneLine turns newlines and other control characters into spaces and trims the ends:
// what is left cannot start a line of its own.
func OneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
	if s = strings.TrimSpace(s); s == "" {
		return "-"
	}
	return s
}

// scissors, after a comment character, is a line past which git reads no trailers.
const scissors = " ------------------------ >8 ------------------------"

// notAnEnd keeps a line of the subject or body from ending the message for git's
// trailer readers: `git interpret-trailers` takes a line "---" (then a space or the
// end) as the start of a patch, and every reader ignores what follows a scissors line.
func notAnEnd(line string) string {
	if line == "---" || strings.HasPrefix(line, "--- ") {
		line = " " + line
	}
	if strings.HasSuffix(line, scissors) {
		line += "."
	}
	return line
}

func cleanBody(s string) string {
	return strings.Map(func(r rune) rune {
		if r != '\n' && (unicode.IsControl(r) || r == '\u2028' || r == '\u2029') {
			return ' '
		}
		return r
	}, s)
}

var trailerLine = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9-]*):\s?(.*)$`)

// ParseTrailers reads the trailer block of a message: its last paragraph, when every
// line of it is a "Key: value" line. Text anywhere else, however it looks, is not read.
func ParseTrailers(message string) []Trailer {
	message = strings.TrimRight(message, "\n ")
	last := message
	if i := strings.LastIndex(message, "\n\n"); i >= 0 {
		last = message[i+2:]
	} else {
		return nil // a message of one paragraph has no trailers
	}
	var out []Trailer
	for _, line := range strings.Split(last, "\n") {
		m := trailerLine.FindStringSubmatch(line)
		if m == nil {
			return nil
		}
		out = append(out, Trailer{m[1], strings.TrimSpace(m[2])})
	}
	return out
}

// TrailerValue is the value of the first trailer named key, or "".
func TrailerValue(trailers []Trailer, key string) string {
	for _, t := range trailers {
		if strings.EqualFold(t.Key, key) {
			return t.Value
		}
	}
	return ""
}
