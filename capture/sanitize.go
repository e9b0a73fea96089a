package capture

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/redact"
)

// maxDepth bounds the nesting of arguments and results: deeper values are kept as the
// JSON text they are, so that no later reader recurses without end.
const maxDepth = 64

// pathKeys are the argument names under which agents pass the file a call reads or writes.
var pathKeys = []string{"file_path", "path", "filePath", "notebook_path", "filename", "file"}

// sanitizer applies a policy's redaction and size bound to one entry's values, and
// counts what it changed.
type sanitizer struct {
	p          *Policy
	raw        []byte // the JSON value being rewritten
	whole      int    // the depth whose containers are bounded as a whole
	redactions int
	truncated  map[string]int
}

// sanitize redacts, bounds and withholds an observation's values in place.
func (p *Policy) sanitize(o *memory.Observation) error {
	s := sanitizer{p: p}
	var err error
	if o.Arguments, err = s.json(o.Arguments, "arguments", 1); err != nil {
		return fmt.Errorf("arguments: %w", err)
	}
	if glob := p.withheldBy(pathOf(o.Arguments)); glob != "" {
		o.Withheld = glob
		o.Arguments = withhold(o.Arguments, glob)
		o.Result, _ = json.Marshal(withheldMark(glob))
	} else if o.Result, err = s.json(o.Result, "result", 0); err != nil {
		return fmt.Errorf("result: %w", err)
	}
	o.ToolName = s.text("", "", o.ToolName)
	o.Error = s.text("error", "", o.Error)
	o.Summary = s.text("", "", o.Summary)
	o.Cwd = s.text("", "", o.Cwd)
	o.Redactions, o.Truncated = s.redactions, s.truncated
	return nil
}

// sanitizeEvent redacts and bounds a session event's text and attributes in place.
func (p *Policy) sanitizeEvent(e *memory.Event) {
	s := sanitizer{p: p}
	e.Text = s.text("text", "", e.Text)
	for k, v := range e.Attrs {
		e.Attrs[k] = s.text("", k, v)
	}
	e.Redactions = s.redactions
}

// text redacts one string held under key, and cuts it to the bound, noting the cut
// under where when where is not empty.
func (s *sanitizer) text(where, key, v string) string {
	limit := s.p.MaxValue
	cut := limit > 0 && len(v) > limit
	size := len(v)
	if cut {
		// Redact a little past the cut, so that a secret that straddles it is found
		// whole rather than left half in the text.
		v = validPrefix(v, limit+4096)
	}
	if s.p.Redactor != nil {
		var n int
		v, n = s.p.Redactor.Field(key, v)
		s.redactions += n
	}
	if cut {
		v = validPrefix(v, limit) + fmt.Sprintf("\n[TRUNCATED: %d bytes]", size)
		if where != "" {
			s.cutAt(where, size)
		}
	}
	return v
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

// json rewrites a JSON value with its strings redacted and bounded, its order kept,
// invalid UTF-8 repaired, and nesting past maxDepth kept as text. An object or array at
// depth whole (1 for an argument's value, 0 for a result) larger than the bound once
// rewritten becomes its text, cut.
func (s *sanitizer) json(raw json.RawMessage, where string, whole int) (json.RawMessage, error) {
	if len(raw) == 0 {
		return raw, nil
	}
	s.raw, s.whole = raw, whole
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var w bytes.Buffer
	if err := s.value(dec, &w, where, "", 0); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	return w.Bytes(), nil
}

func (s *sanitizer) value(dec *json.Decoder, w *bytes.Buffer, where, key string, depth int) error {
	start, from := w.Len(), dec.InputOffset()
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth >= maxDepth {
			if err := skip(dec); err != nil {
				return err
			}
			text := strings.TrimLeft(string(s.raw[from:dec.InputOffset()]), " \t\r\n,:")
			writeString(w, s.text(where, key, text))
			return nil
		}
		if err := s.container(dec, w, t, where, key, depth); err != nil {
			return err
		}
		if limit := s.p.MaxValue; depth == s.whole && limit > 0 && w.Len()-start > limit {
			// Too large as a whole even with each string within bounds: keep its
			// text, cut.
			size := w.Len() - start
			text := validPrefix(string(w.Bytes()[start:]), limit) + fmt.Sprintf("\n[TRUNCATED: %d bytes]", size)
			w.Truncate(start)
			writeString(w, text)
			s.cutAt(where, size)
		}
	case string:
		writeString(w, s.text(where, key, t))
	case json.Number:
		if v, n := s.redactNumber(key, t.String()); n > 0 {
			writeString(w, v)
		} else {
			w.WriteString(t.String())
		}
	case bool:
		w.WriteString(strconv.FormatBool(t))
	case nil:
		w.WriteString("null")
	}
	return nil
}

func (s *sanitizer) container(dec *json.Decoder, w *bytes.Buffer, open json.Delim, where, key string, depth int) error {
	w.WriteByte(byte(open))
	for i := 0; dec.More(); i++ {
		if i > 0 {
			w.WriteByte(',')
		}
		childKey, childWhere := key, where
		if open == '{' {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			childKey = tok.(string)
			if depth == 0 {
				childWhere = where + "." + childKey
			}
			writeString(w, childKey)
			w.WriteByte(':')
		}
		if err := s.value(dec, w, childWhere, childKey, depth+1); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing delimiter
		return err
	}
	if open == '{' {
		w.WriteByte('}')
	} else {
		w.WriteByte(']')
	}
	return nil
}

// redactNumber redacts a number held under a secret's key ("pin": 48213377).
func (s *sanitizer) redactNumber(key, num string) (string, int) {
	if s.p.Redactor == nil || !redact.SecretKey(key) || redact.Placeholder(num) {
		return num, 0
	}
	s.redactions++
	return redact.Mark(redact.RuleAssignment), 1
}

// skip reads past the rest of a container whose opening delimiter was just read.
func skip(dec *json.Decoder) error {
	for depth := 1; depth > 0; {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('['), json.Delim('{'):
			depth++
		case json.Delim(']'), json.Delim('}'):
			depth--
		}
	}
	return nil
}

// writeString writes s as a JSON string, as encoding/json does without HTML escaping:
// quotes, backslashes and control characters escaped, U+2028 and U+2029 too (some
// JavaScript readers take them for line ends). s is valid UTF-8: the decoder made it so.
func writeString(w *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	w.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < 0x80 {
			i++
			continue
		}
		if c < 0x80 {
			w.WriteString(s[start:i])
			switch c {
			case '"', '\\':
				w.WriteByte('\\')
				w.WriteByte(c)
			case '\n':
				w.WriteString(`\n`)
			case '\r':
				w.WriteString(`\r`)
			case '\t':
				w.WriteString(`\t`)
			default:
				w.WriteString(`\u00`)
				w.WriteByte(hex[c>>4])
				w.WriteByte(hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == '\u2028' || r == '\u2029' || r == utf8.RuneError && size == 1 {
			w.WriteString(s[start:i])
			if r == utf8.RuneError {
				w.WriteString(`\ufffd`)
			} else {
				w.WriteString(`\u202`)
				w.WriteByte(hex[r&0xF])
			}
			start = i + size
		}
		i += size
	}
	w.WriteString(s[start:])
	w.WriteByte('"')
}
