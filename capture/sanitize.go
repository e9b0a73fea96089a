package capture

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agmem/agmem/internal/jsonscan"
	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/redact"
)

// maxDepth bounds the nesting of arguments and results: deeper values are kept as the
// JSON text they are, so that no later reader recurses without end.
const maxDepth = 64

// pathKeys are the argument names under which agents pass the file a call reads or writes.
var pathKeys = [...]string{"file_path", "path", "filePath", "notebook_path", "filename", "file"}

// Bounds on the short fields of an entry, which travel into frontmatter and tables.
const (
	maxKey   = 1 << 10 // a JSON member name
	maxShort = 256     // an agent id, an event's name
)

// sanitizer applies a policy's redaction and size bounds to one entry's values, and
// counts what it changed. A secret found in one value is hidden in all of them: once a
// first pass has redacted and bounded them all, noting the secrets it found (seen), a
// second (again) hides each wherever the entry repeats it.
type sanitizer struct {
	p          *Policy
	redactions int
	truncated  map[string]int
	seen       redact.Seen
	again      bool
}

// sanitize withholds, redacts and bounds an observation's values in place. Whether a
// file is withheld is decided on the arguments as given, before anything is redacted.
func (p *Policy) sanitize(o *memory.Observation) error {
	s := sanitizer{p: p}
	command := Command(o.Arguments)
	glob, read := p.withheldBy(FilePath(o.Arguments)), true
	if glob == "" {
		// A shell command that prints the file: its output is the file's contents, and
		// so is its error where it failed (Claude Code gives a failed command's output
		// as its error); the command itself is kept.
		glob, read = redact.PrintedFile(command, p.withheldBy), false
	}
	if glob != "" {
		o.Withheld = glob
		o.Result, _ = json.Marshal(withheldMark(glob))
		switch {
		case read:
			o.Arguments = withhold(o.Arguments, glob)
		case o.Error != "":
			o.Error = withheldMark(glob)
		}
	}
	// What a command that prints a secret gives back is held under the secret's name:
	// its output is the secret's value, bare.
	printed := ""
	if p.Redactor != nil {
		printed = redact.PrintedSecret(command)
	}
	for pass := 0; pass == 0 || pass == 1 && s.seen.Any(); pass++ {
		s.again = pass == 1
		var err error
		if o.Arguments, err = s.json(o.Arguments, "arguments", "", 1); err != nil {
			return fmt.Errorf("arguments: %w", err)
		}
		if o.Result, err = s.json(o.Result, "result", printed, 0); err != nil {
			return fmt.Errorf("result: %w", err)
		}
		o.ToolName = s.text(o.ToolName, "", s.p.MaxValue, "")
		o.ToolUseID = s.text(o.ToolUseID, "", maxToolUseID, "")
		o.AgentID = s.text(o.AgentID, "", maxShort, "")
		o.PromptID = s.text(o.PromptID, "", maxToolUseID, "")
		o.Error = s.text(o.Error, printed, s.p.MaxValue, "error")
		o.Summary = s.text(o.Summary, "", s.p.MaxValue, "")
		o.Cwd = s.text(o.Cwd, "", s.p.MaxValue, "")
	}
	o.Redactions, o.Truncated = s.redactions, s.cutNotes()
	return nil
}

// sanitizeEvent redacts and bounds a session event's name, text and attributes in place.
func (p *Policy) sanitizeEvent(e *memory.Event) {
	s := sanitizer{p: p}
	for pass := 0; pass == 0 || pass == 1 && s.seen.Any(); pass++ {
		s.again = pass == 1
		e.Name = s.text(e.Name, "", maxShort, "")
		e.Text = s.text(e.Text, "", s.p.MaxValue, "")
		if len(e.Attrs) > 0 {
			attrs := make(map[string]string, len(e.Attrs))
			for k, v := range e.Attrs {
				attrs[s.text(k, "", maxKey, "")] = s.text(v, k, s.p.MaxValue, "")
			}
			e.Attrs = attrs
		}
	}
	e.Redactions = s.redactions
}

// text redacts one string held under key (for a value named by its key) and cuts it
// to limit bytes (0: no bound), a secret that straddles the cut replaced whole. A cut
// value ends with a mark that gives its size, noted under where unless where is "".
// Again, it only hides the secrets seen in the entry.
func (s *sanitizer) text(v, key string, limit int, where string) string {
	if s.again {
		var n int
		if body, mark, cut := cutOff(v); cut {
			body, n = s.seen.AgainCut(body) // what the cut left of a secret too
			v = body + mark
		} else {
			v, n = s.seen.Again(v)
		}
		s.redactions += n
		return v
	}
	size, cut := len(v), limit > 0 && len(v) > limit
	if cut && s.p.reread {
		if body, mark, was := cutOff(v); was && len(body) <= limit+maxMark {
			// Cut when it was captured: its body is redacted, its mark kept. The body
			// may pass the bound by the mark of a secret that straddled the cut.
			return s.text(body, key, 0, "") + mark
		}
	}
	var n int
	switch {
	case s.p.Redactor != nil && cut:
		v, n = s.p.Redactor.Cut(key, v, limit, &s.seen)
	case s.p.Redactor != nil:
		v, n = s.p.Redactor.Field(key, v, &s.seen)
	case cut:
		v = validPrefix(v, limit)
	}
	s.redactions += n
	if cut {
		v += cutMark(size)
		if where != "" {
			s.cutAt(where, size)
		}
	}
	return v
}

// cutNotes are the notes of what was cut, where each was: a member's name there that
// holds a secret is hidden as the second pass hid it in the value.
func (s *sanitizer) cutNotes() map[string]int {
	if !s.seen.Any() || len(s.truncated) == 0 {
		return s.truncated
	}
	notes := make(map[string]int, len(s.truncated))
	for where, size := range s.truncated {
		where, _ = s.seen.Again(where)
		notes[where] = size
	}
	return notes
}

// cutMark ends a value cut short: its size whole.
func cutMark(size int) string { return fmt.Sprintf("%s%d bytes]", cutMarkPrefix, size) }

const cutMarkPrefix = "\n[TRUNCATED: "

// maxMark is the longest redaction mark: "[REDACTED:", a rule id of 64 bytes, "]".
const maxMark = 75

// cutOff is a value cut short as its body and its cutMark; cut is false for one that
// ends with no such mark (a size, in digits: what else looks like one is text).
func cutOff(v string) (body, mark string, cut bool) {
	i := strings.LastIndex(v, cutMarkPrefix)
	if i < 0 {
		return v, "", false
	}
	size, ok := strings.CutSuffix(v[i+len(cutMarkPrefix):], " bytes]")
	if !ok || size == "" || strings.Trim(size, "0123456789") != "" {
		return v, "", false
	}
	return v[:i], v[i:], true
}

func (s *sanitizer) cutAt(where string, size int) {
	if s.truncated == nil {
		s.truncated = map[string]int{}
	}
	s.truncated[where] = size
}

// validPrefix is s cut to at most n bytes at a character boundary.
func validPrefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// json rewrites a JSON value with its member names and strings redacted and bounded,
// its order kept, invalid UTF-8 repaired, and nesting past maxDepth kept as text. An
// object or array at depth whole (1 for an argument's value, 0 for a result) larger
// than the bound once rewritten becomes its text, cut. Each string of it is held
// under printed, when that names a secret, whatever its member's name.
func (s *sanitizer) json(raw json.RawMessage, where, printed string, whole int) (json.RawMessage, error) {
	if len(raw) == 0 {
		return raw, nil
	}
	wk := walk{s: s, r: jsonscan.New(raw), where: where, printed: printed, whole: whole}
	wk.w.Grow(len(raw) + len(raw)/8)
	if _, err := wk.value("", "", 0); err != nil {
		return nil, err
	}
	if !wk.r.End() {
		return nil, errors.New("more than one JSON value")
	}
	return wk.w.Bytes(), nil
}

// walk is the rewrite of one JSON value.
type walk struct {
	s       *sanitizer
	r       jsonscan.Scanner
	w       bytes.Buffer
	where   string // "arguments" or "result", for the notes of cuts
	printed string // the secret a command printed, which its output's strings hold
	whole   int
}

// value rewrites the next value, held under key: the member name that says what it
// is, which for a value below a secret's key is that key. It returns the value's text
// when it is a string.
func (wk *walk) value(where, key string, depth int) (string, error) {
	if where == "" {
		where = wk.where
	}
	w := &wk.w
	start := w.Len()
	switch c := wk.r.Peek(); c {
	case '{', '[':
		if depth >= maxDepth {
			// Bounded as a member's value is, the walk's own levels not counted:
			// arguments objectOf wrapped may nest a level deeper than JSON allows.
			text, err := wk.r.Skip(1)
			if err != nil {
				return "", err
			}
			writeString(w, wk.s.text(string(text), wk.stringKey(key), wk.s.p.MaxValue, where))
			return "", nil
		}
		if err := wk.container(c, where, key, depth); err != nil {
			return "", err
		}
		if limit := wk.s.p.MaxValue; depth == wk.whole && limit > 0 && w.Len()-start > limit && !wk.s.again {
			// Too large as a whole even with each string within bounds: keep its
			// text, cut.
			size := w.Len() - start
			text := validPrefix(string(w.Bytes()[start:]), limit) + cutMark(size)
			w.Truncate(start)
			writeString(w, text)
			wk.s.cutAt(where, size)
		}
	case '"':
		t, err := wk.r.Unquote()
		if err != nil {
			return "", err
		}
		writeString(w, wk.s.text(t, wk.stringKey(key), wk.s.p.MaxValue, where))
		return t, nil
	default:
		lit, err := wk.r.Literal()
		if err != nil {
			return "", err
		}
		if c == 't' || c == 'f' || c == 'n' {
			w.Write(lit)
		} else if out, n := wk.s.number(key, string(lit)); n > 0 {
			writeString(w, out)
		} else {
			w.Write(lit)
		}
	}
	return "", nil
}

// stringKey is the key a string held under key is redacted as.
func (wk *walk) stringKey(key string) string {
	if wk.printed != "" {
		return wk.printed
	}
	return key
}

// container rewrites an object or an array that opens with open. A value below a
// secret's key is held under that key; so is the "value" of an object whose "name" or
// "key" names a secret ({"name": "DB_PASSWORD", "value": "…"}, as HAR headers and
// Kubernetes env lists write them, "Name" and "Value" as AWS's, "ParameterKey" and
// "ParameterValue" as CloudFormation's). A value written before its name is seen as
// the name's secret once the name is read, for the second pass to hide.
func (wk *walk) container(open byte, where, key string, depth int) error {
	w := &wk.w
	end := open + 2 // '}' and ']' are two past '{' and '['
	w.WriteByte(open)
	secretParent := redact.SecretKey(key)
	var named, valueFirst string
	for i, more := 0, wk.r.Open(end); more; i++ {
		if i > 0 {
			w.WriteByte(',')
		}
		childKey, childWhere, name := key, where, ""
		if open == '{' {
			var err error
			if name, err = wk.r.Unquote(); err != nil {
				return err
			}
			if err := wk.r.Next(':'); err != nil {
				return err
			}
			shown := wk.s.text(name, "", maxKey, "")
			writeString(w, shown)
			w.WriteByte(':')
			switch {
			case secretParent:
			case valueMember(name) && named != "":
				childKey = named
			default:
				childKey = name
			}
			if depth == 0 {
				childWhere = where + "." + shown
			}
		}
		str, err := wk.value(childWhere, childKey, depth+1)
		if err != nil {
			return err
		}
		switch {
		case nameMember(name):
			named = str
		case valueMember(name) && named == "":
			valueFirst = str
		}
		if more, err = wk.r.More(end); err != nil {
			return err
		}
	}
	w.WriteByte(end)
	if valueFirst != "" && named != "" && !secretParent && !wk.s.again && wk.s.p.Redactor != nil {
		wk.s.p.Redactor.Field(named, valueFirst, &wk.s.seen)
	}
	return nil
}

// nameMember and valueMember say whether a member's name is that of one that names
// its object's value, and of the value.
func nameMember(name string) bool {
	return strings.EqualFold(name, "name") || strings.EqualFold(name, "key") || strings.EqualFold(name, "ParameterKey") ||
		strings.EqualFold(name, "OptionName")
}

func valueMember(name string) bool {
	return strings.EqualFold(name, "value") || strings.EqualFold(name, "val") || strings.EqualFold(name, "ParameterValue") ||
		strings.EqualFold(name, "OptionValue")
}

// number redacts a number held under a secret's key ("pin_code": 48213377), or seen.
func (s *sanitizer) number(key, num string) (string, int) {
	var out string
	var n int
	switch {
	case s.again:
		out, n = s.seen.Again(num)
	case s.p.Redactor == nil:
		return num, 0
	default:
		out, n = s.p.Redactor.Field(key, num, &s.seen)
	}
	s.redactions += n
	return out, n
}

// writeString writes s as a JSON string, as encoding/json does without HTML escaping:
// the journal escapes the whole observation for HTML once it is written.
func writeString(w *bytes.Buffer, s string) {
	w.Write(jsonscan.AppendString(w.AvailableBuffer(), s, false))
}
