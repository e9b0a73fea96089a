package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// This file edits JSON as text. A document is parsed into nodes that know where they lie
// in the text; an edit splices new text into the old, so every byte outside the edit
// (key order, spacing, comments, escapes, number spellings) stays as it was. Inserted text
// copies the indentation and line endings it finds around it.

// node is one JSON value and where it lies: text[start:end].
type node struct {
	kind       byte // '{', '[', '"', or 'v' for a number, true, false or null
	start, end int
	members    []member // an object's, in text order
	elems      []*node  // an array's
}

type member struct {
	key      string
	keyStart int
	value    *node
}

// get returns the value of key (the last one, as JavaScript's JSON.parse keeps) and its
// index, or nil and -1.
func (n *node) get(key string) (*node, int) {
	for i := len(n.members) - 1; i >= 0; i-- {
		if n.members[i].key == key {
			return n.members[i].value, i
		}
	}
	return nil, -1
}

// document is a JSON text with an object at the top.
type document struct {
	src      []byte // the text as in the file
	plain    []byte // the same with comments turned into spaces: what is parsed
	comments []comment
	root     *node
	indent   string // one level of indentation; "" when the text is all on one line
	spaced   bool   // a space follows a colon (and so a comma) where values stay on one line
	newline  string
}

var errNotObject = errors.New("the top level is not a JSON object")

// parseDocument parses src. Empty text is an empty object; so is a text of comments only,
// put after them.
func parseDocument(src []byte, comments bool) (*document, error) {
	d := &document{src: src, plain: src, newline: "\n"}
	if bytes.Contains(src, []byte("\r\n")) {
		d.newline = "\r\n"
	}
	if comments {
		d.plain = blankComments(src)
	}
	if len(bytes.TrimSpace(d.plain)) == 0 {
		if bytes.Equal(d.plain, d.src) {
			d.src = []byte("{}\n")
		} else {
			d.src = bytes.Clone(d.src)
			if !bytes.HasSuffix(d.src, []byte("\n")) {
				d.src = append(d.src, d.newline...)
			}
			d.src = append(d.src, "{}"+d.newline...)
		}
		d.plain = d.src
		if comments {
			d.plain = blankComments(d.src)
		}
	}
	if comments {
		d.comments, _ = scanComments(d.src)
	}
	if !json.Valid(d.plain) {
		var v any
		err := json.Unmarshal(d.plain, &v)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line := 1 + bytes.Count(d.plain[:min(int(se.Offset), len(d.plain))], []byte("\n"))
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		return nil, err
	}
	i := skipSpace(d.plain, 0)
	if d.plain[i] != '{' {
		return nil, errNotObject
	}
	d.root, _ = parseValue(d.plain, i)
	d.spaced = len(d.root.members) == 0 || d.plain[d.root.members[0].value.start-1] == ' '
	d.indent = "  "
	inner := d.plain[d.root.start:d.root.end]
	if !bytes.Contains(inner, []byte("\n")) && len(d.root.members) > 0 {
		d.indent = ""
	} else if len(d.root.members) > 0 && d.ownLine(d.root.members[0].keyStart) {
		if ind := d.lineIndent(d.root.members[0].keyStart); ind != "" {
			d.indent = ind
		}
	}
	return d, nil
}

// comment is where a comment lies: text[start:end]. A line comment ends where its line
// does, before the line break.
type comment struct {
	start, end int
	line       bool
}

// scanComments finds the // and /* */ comments outside strings, in order. It stops at a
// /* that nothing closes, and says so.
func scanComments(src []byte) (cs []comment, closed bool) {
	inString := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			end := len(src)
			if nl := bytes.IndexByte(src[i:], '\n'); nl >= 0 {
				end = i + nl
				if src[end-1] == '\r' {
					end--
				}
			}
			cs = append(cs, comment{start: i, end: end, line: true})
			i = end
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := bytes.Index(src[i+2:], []byte("*/"))
			if end < 0 {
				return cs, false
			}
			cs = append(cs, comment{start: i, end: i + 2 + end + 2})
			i += 2 + end + 1
		}
	}
	return cs, true
}

// blankComments returns src with // and /* */ comments outside strings replaced by
// spaces (newlines kept), so that offsets stay the same. An unclosed /* is left for the
// JSON check to refuse.
func blankComments(src []byte) []byte {
	out := bytes.Clone(src)
	cs, _ := scanComments(src)
	for _, c := range cs {
		for j := c.start; j < c.end; j++ {
			if out[j] != '\n' {
				out[j] = ' '
			}
		}
	}
	return out
}

// hasComment says whether a comment lies, whole or in part, in text[start:end].
func (d *document) hasComment(start, end int) bool {
	for _, c := range d.comments {
		if c.start < end && c.end > start {
			return true
		}
	}
	return false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// parseValue parses the value at b[i:]; b is valid JSON (json.Valid said so).
func parseValue(b []byte, i int) (*node, int) {
	n := &node{kind: b[i], start: i}
	switch b[i] {
	case '{':
		i = skipSpace(b, i+1)
		for b[i] != '}' {
			keyNode, j := parseValue(b, i)
			var key string
			_ = json.Unmarshal(b[keyNode.start:keyNode.end], &key)
			j = skipSpace(b, j)
			value, k := parseValue(b, skipSpace(b, j+1)) // past the colon
			n.members = append(n.members, member{key: key, keyStart: i, value: value})
			i = skipSpace(b, k)
			if b[i] == ',' {
				i = skipSpace(b, i+1)
			}
		}
		i++
	case '[':
		i = skipSpace(b, i+1)
		for b[i] != ']' {
			elem, j := parseValue(b, i)
			n.elems = append(n.elems, elem)
			i = skipSpace(b, j)
			if b[i] == ',' {
				i = skipSpace(b, i+1)
			}
		}
		i++
	case '"':
		for i++; b[i] != '"'; i++ {
			if b[i] == '\\' {
				i++
			}
		}
		i++
	default:
		n.kind = 'v'
		for i < len(b) && strings.IndexByte("+-.0123456789eEtrufalsn", b[i]) >= 0 {
			i++
		}
	}
	n.end = i
	return n, i
}

// lineIndent is the run of spaces and tabs that starts the line holding pos.
func (d *document) lineIndent(pos int) string {
	start := bytes.LastIndexByte(d.plain[:pos], '\n') + 1
	end := start
	for end < len(d.plain) && (d.plain[end] == ' ' || d.plain[end] == '\t') {
		end++
	}
	return string(d.plain[start:end])
}

// ownLine says whether only spaces stand between the start of pos's line and pos.
func (d *document) ownLine(pos int) bool {
	nl := bytes.LastIndexByte(d.plain[:pos], '\n')
	return nl >= 0 && len(bytes.Trim(d.plain[nl+1:pos], " \t")) == 0
}

// render writes v as JSON: indented, its lines after the first starting with prefix; or
// on one line, spaced as the document is.
func (d *document) render(v any, prefix string, pretty bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if pretty {
		enc.SetIndent(prefix, d.indent)
	}
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("hooks: rendering %T: %v", v, err)) // only agmem's own values are rendered
	}
	text := strings.TrimSuffix(b.String(), "\n")
	if !pretty && d.spaced {
		text = spaceOut(text)
	}
	return strings.ReplaceAll(text, "\n", d.newline)
}

// spaceOut puts a space after each colon and comma of compact JSON, outside strings.
func spaceOut(compact string) string {
	var b strings.Builder
	inString := false
	for i := 0; i < len(compact); i++ {
		c := compact[i]
		b.WriteByte(c)
		switch {
		case inString && c == '\\':
			i++
			b.WriteByte(compact[i])
		case c == '"':
			inString = !inString
		case !inString && (c == ':' || c == ','):
			b.WriteByte(' ')
		}
	}
	return b.String()
}

func (d *document) pretty() bool { return d.indent != "" }

// edit returns the text with text[start:end] replaced.
func (d *document) edit(start, end int, text string) []byte {
	out := make([]byte, 0, len(d.src)+len(text))
	out = append(out, d.src[:start]...)
	out = append(out, text...)
	return append(out, d.src[end:]...)
}

// spans returns where each member (from its key) or element of c starts and ends.
func spans(c *node) (starts, ends []int) {
	for _, m := range c.members {
		starts, ends = append(starts, m.keyStart), append(ends, m.value.end)
	}
	for _, e := range c.elems {
		starts, ends = append(starts, e.start), append(ends, e.end)
	}
	return starts, ends
}

// add puts v last in the container c: as the member key in an object, as an element in
// an array.
func (d *document) add(c *node, key string, v any) []byte {
	starts, ends := spans(c)
	text := func(prefix string, pretty bool) string {
		val := d.render(v, prefix, pretty)
		if c.kind != '{' {
			return val
		}
		k, _ := json.Marshal(key)
		if pretty || d.spaced {
			return string(k) + ": " + val
		}
		return string(k) + ":" + val
	}
	if len(starts) == 0 {
		inner := d.src[c.start+1 : c.end-1]
		if !d.pretty() {
			return d.edit(c.start+1, c.end-1, text("", false)+string(inner))
		}
		ind := d.lineIndent(c.start)
		body := d.newline + ind + d.indent + text(ind+d.indent, true)
		if len(bytes.TrimSpace(inner)) == 0 {
			return d.edit(c.start+1, c.end-1, body+d.newline+ind)
		}
		return d.edit(c.start+1, c.start+1, body) // keep the comments that fill it
	}
	last := starts[len(starts)-1]
	if d.pretty() && d.ownLine(last) {
		ind := d.lineIndent(last)
		return d.edit(ends[len(ends)-1], ends[len(ends)-1], ","+d.newline+ind+text(ind, true))
	}
	sep := "" // what stands after a comma: as between the last two items, else by the style
	if len(starts) > 1 {
		gap := last
		for gap > 0 && (d.plain[gap-1] == ' ' || d.plain[gap-1] == '\t') {
			gap--
		}
		sep = string(d.plain[gap:last])
	} else if d.spaced {
		sep = " "
	}
	return d.edit(ends[len(ends)-1], ends[len(ends)-1], ","+sep+text("", false))
}

// replace puts v where n is, indented as n was.
func (d *document) replace(n *node, v any) []byte {
	pretty := d.pretty() && d.ownLine(n.start)
	return d.edit(n.start, n.end, d.render(v, d.lineIndent(n.start), pretty))
}

// remove takes the i-th item out of container c, with the comma that separated it from
// a neighbour and the space around them; never a comment. A container left with nothing
// but space is emptied.
func (d *document) remove(c *node, i int) []byte {
	starts, ends := spans(c)
	start, end := starts[i], ends[i]
	switch {
	case len(starts) == 1 && !d.hasComment(c.start+1, c.end-1):
		return d.edit(c.start+1, c.end-1, "")
	case len(starts) == 1:
		return d.edit(d.spaceBefore(start, c.start+1, end), end, "")
	case i > 0:
		comma := skipSpace(d.plain, ends[i-1]) // comments are blank in plain
		return d.cut(comma, comma+1, d.spaceBefore(start, comma+1, end), end)
	default:
		comma := skipSpace(d.plain, end)
		return d.cut(start, end, comma, skipSpace(d.src, comma+1))
	}
}

// spaceBefore is where the space before the item at start begins, from floor on: the
// space goes with the item taken out from there to end. A line comment keeps the line
// break that closes it, or one of its own if the line went on after end.
func (d *document) spaceBefore(start, floor, end int) int {
	i := start
	for i > floor && strings.IndexByte(" \t\r\n", d.src[i-1]) >= 0 {
		i--
	}
	for _, c := range d.comments {
		if !c.line || i <= c.start || i > c.end {
			continue
		}
		rest := end
		for rest < len(d.src) && (d.src[rest] == ' ' || d.src[rest] == '\t') {
			rest++
		}
		if rest < len(d.src) && (d.src[rest] == '\n' || d.src[rest] == '\r') {
			return c.end // the line break after end closes the comment now
		}
		return c.end + bytes.IndexByte(d.src[c.end:], '\n') + 1
	}
	return i
}

// cut returns the text without text[a:b] and text[c:e], a ≤ b ≤ c ≤ e.
func (d *document) cut(a, b, c, e int) []byte {
	out := make([]byte, 0, len(d.src))
	out = append(out, d.src[:a]...)
	out = append(out, d.src[b:c]...)
	return append(out, d.src[e:]...)
}

// same says whether n holds the same JSON value as v, whatever the spacing or key order.
func (d *document) same(n *node, v any) bool {
	var have, want any
	if json.Unmarshal(d.plain[n.start:n.end], &have) != nil {
		return false
	}
	b, err := json.Marshal(v)
	if err != nil || json.Unmarshal(b, &want) != nil {
		return false
	}
	return reflect.DeepEqual(have, want)
}

// stringAt returns the string n holds, if it is one.
func (d *document) stringAt(n *node) (string, bool) {
	if n == nil || n.kind != '"' {
		return "", false
	}
	var s string
	return s, json.Unmarshal(d.plain[n.start:n.end], &s) == nil
}
