package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// toolResult is the result of a tools/call, as the tracker reads it.
type toolResult struct {
	Content           []contentBlock  `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

// kept is what an observation keeps of a tool's result, and the text of its content
// blocks. What is kept is the text, as a JSON string; structured content is kept as
// JSON, alone when the text only spells it again (as a tool does for older clients),
// beside the text when it says something else, and not at all when it only wraps the
// text ({"content": text}, as the filesystem server's).
func (r *toolResult) kept() (result json.RawMessage, text string) {
	if r == nil {
		return json.RawMessage(`""`), ""
	}
	parts := make([]string, len(r.Content))
	for i, b := range r.Content {
		parts[i] = b.text()
	}
	text = strings.Join(parts, "\n")
	quoted := jsonString(text)
	structured := bytes.TrimSpace(r.StructuredContent)
	switch {
	case len(structured) == 0 || string(structured) == "null" || wraps(structured, text, quoted):
		result = quoted
	case text == "" || spells(text, structured):
		result = structured
	default:
		result, _ = json.Marshal(struct {
			Content           json.RawMessage `json:"content"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		}{quoted, structured})
	}
	return result, text
}

// jsonString is s as a JSON string, escaped as JavaScript's JSON.stringify escapes it
// (which most servers use), so that it can be compared with what a server wrote.
func jsonString(s string) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// contentBlock is one block of a tool's content, of any of its types.
type contentBlock struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	MimeType string          `json:"mimeType"`
	Data     json.RawMessage `json:"data"` // base64: only its size is told
	URI      string          `json:"uri"`
	Resource *struct {
		URI      string  `json:"uri"`
		MimeType string  `json:"mimeType"`
		Text     *string `json:"text"`
	} `json:"resource"`
}

// text is a block as text: a text block's text, a resource's text, and a line that
// names what else it is (an image, audio, a link, a binary resource, a kind of block
// this proxy does not know).
func (b contentBlock) text() string {
	switch {
	case b.Type == "text":
		return b.Text
	case b.Type == "image" || b.Type == "audio":
		return fmt.Sprintf("[%s: %s, %d bytes]", b.Type, b.MimeType, max(len(b.Data)-2, 0)/4*3)
	case b.Type == "resource" && b.Resource != nil && b.Resource.Text != nil:
		return *b.Resource.Text
	case b.Type == "resource" && b.Resource != nil:
		return fmt.Sprintf("[resource: %s, %s]", b.Resource.URI, b.Resource.MimeType)
	case b.Type == "resource_link":
		return "[resource link: " + b.URI + "]"
	}
	return "[" + b.Type + " content]"
}

// wraps is whether v is an object of one member whose value is text: quoted, the text
// as a JSON string, settles it by comparison when the server escaped the text as
// jsonString does, and spares reading a large v again.
func wraps(v json.RawMessage, text string, quoted json.RawMessage) bool {
	dec := json.NewDecoder(bytes.NewReader(v))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	if _, err := dec.Token(); err != nil { // the member's name
		return false
	}
	rest := bytes.TrimLeft(v[dec.InputOffset():], " \t\r\n")
	if rest, ok := bytes.CutPrefix(rest, []byte(":")); ok {
		if rest, ok := bytes.CutPrefix(bytes.TrimLeft(rest, " \t\r\n"), quoted); ok {
			return string(bytes.TrimSpace(rest)) == "}"
		}
	}
	var s string
	if dec.Decode(&s) != nil || s != text {
		return false
	}
	t, err := dec.Token()
	return err == nil && t == json.Delim('}')
}

// spells is whether text is a JSON spelling of v.
func spells(text string, v json.RawMessage) bool {
	t := strings.TrimSpace(text)
	if t == string(v) {
		return true
	}
	if t == "" || t[0] != '{' && t[0] != '[' {
		return false // not a JSON document: not worth reading
	}
	var a, b any
	return json.Unmarshal([]byte(t), &a) == nil && json.Unmarshal(v, &b) == nil && reflect.DeepEqual(a, b)
}
