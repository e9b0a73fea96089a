// Package hint is how agmem tells a person about an error: errors that carry advice,
// causes whose advice comes first whichever command met them (a damaged journal, a
// full disk), and the one or two lines agmem prints for an error. The agmem binary and
// the agmem-record binary hooks run both print through it, so an error reads the same
// from either. It also makes recorded text safe to print to a terminal (OneLine, Block).
package hint

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"syscall"
	"unicode"
)

// Error is an error with advice for the person who hit it.
type Error struct {
	Err  error
	Hint string
}

func (h *Error) Error() string { return h.Err.Error() }
func (h *Error) Unwrap() error { return h.Err }

// With gives err advice.
func With(err error, advice string) error { return &Error{Err: err, Hint: advice} }

// Else gives err advice when it has none of its own: what its cause advises is the
// more precise.
func Else(err error, advice string) error {
	if For(err) != "" {
		return err
	}
	return With(err, advice)
}

// After gives err advice that follows what advice it has already: the first says what
// to do about the cause, the second what else the person should know.
func After(err error, advice string) error {
	if first := For(err); first != "" {
		advice = first + "; " + advice
	}
	return With(err, advice)
}

// Cause is an error that is the cause of whatever failed, wherever it was met (a
// damaged journal, a full disk): its advice comes before the advice of any error that
// wraps it, since what to do about it is the same whichever command met it. Make one
// with NewCause, as a sentinel for errors.Is.
type Cause struct {
	msg, advice string
}

// NewCause makes a cause with its advice.
func NewCause(msg, advice string) *Cause { return &Cause{msg, advice} }

func (c *Cause) Error() string { return c.msg }

// For is the advice that goes with err: a cause's first (the disk's own trouble counts
// as one), else that of the outermost error with advice.
func For(err error) string {
	var c *Cause
	switch {
	case errors.As(err, &c):
		return c.advice
	case errors.Is(err, syscall.EROFS):
		return "make .agmem/ and the files in it writable (a read-only mount, chmod or chattr +i stops agmem)"
	case errors.Is(err, syscall.ENOSPC):
		return "free some space on the disk that holds the memory repo; what was recorded before is kept"
	}
	var h *Error
	if errors.As(err, &h) {
		return h.Hint
	}
	return ""
}

// Print writes err on one line, and advice on a second when there is some.
func Print(w io.Writer, err error, advice string) {
	fmt.Fprintf(w, "agmem: %s\n", OneLine(err.Error()))
	if advice != "" {
		fmt.Fprintf(w, "agmem: hint: %s\n", advice)
	}
}

// Recover, deferred by a binary's Main, turns a panic into exit code 1 and two lines on
// stderr: no stack trace reaches a user, and no panic's exit 2 reaches an agent, which
// would read it as "block".
func Recover(stderr io.Writer, code *int) {
	if p := recover(); p != nil {
		fmt.Fprintf(stderr, "agmem: internal error: %v\n", p)
		fmt.Fprintln(stderr, "agmem: hint: nothing recorded was lost; please report this")
		*code = 1
	}
}

// Block makes text of many lines safe for a terminal: its lines and tabs stay; any
// other control character (an escape sequence's ESC, a carriage return that would print
// over the line before it), and any that misleads, is shown as its Go escape, \x1b, so
// that recorded output can neither drive the terminal nor hide what it holds.
func Block(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if !strings.ContainsFunc(s, isDriving) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isDriving(r) {
			q := strconv.QuoteToASCII(string(r))
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isDriving(r rune) bool { return (unicode.IsControl(r) || Misleads(r)) && r != '\n' && r != '\t' }

// Misleads says whether r changes how the text around it is shown, or what a model
// reads in it, without showing itself: a line or paragraph separator; a bidirectional
// override or isolate, which reorders what follows ("Trojan Source"); any other format
// character (Unicode's Cf), such as a zero-width space, a byte order mark, a soft hyphen
// or a tag character, whose runs spell text a model reads and a person does not see
// ("ASCII smuggling"). The zero-width joiner and non-joiner are kept: scripts and emoji
// are written with them.
func Misleads(r rune) bool {
	switch {
	case r == '\u2028' || r == '\u2029':
		return true
	case r == '\u200c' || r == '\u200d' || r < 0xad:
		return false
	}
	return unicode.Is(unicode.Cf, r)
}

// OneLine makes text safe for one terminal line: control characters (escape sequences
// included) and those that mislead (Misleads) become spaces, and runs of space collapse.
func OneLine(s string) string {
	return strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || Misleads(r) {
			return ' '
		}
		return r
	}, s)), " ")
}
