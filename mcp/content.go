package mcp

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// toolResult reads the result of a tools/call: what an observation keeps of it, the
// text of its content blocks, and isError. What is kept is the text, as a JSON string;
// structured content is kept as JSON, alone when the text only spells it again (as a
// tool does for older clients), beside the text when it says something else, and not
// at all when it only wraps the text ({"content": text}, as the filesystem server's).
func toolResult(raw json.RawMessage) (result json.RawMessage, text string, isError bool) {
	var r struct {
		Content           []json.RawMessage `json:"content"`
		StructuredContent json.RawMessage   `json:"structuredContent"`
		IsError           bool              `json:"isError"`
	}
	if json.Unmarshal(raw, &r) != nil {
		return raw, "", false // not a tool's result: kept as sent
	}
	parts := make([]string, len(r.Content))
	for i, b := range r.Content {
		parts[i] = blockText(b)
	}
	text = strings.Join(parts, "\n")
	var structured any
	switch {
	case json.Unmarshal(r.StructuredContent, &structured) != nil || structured == nil || wraps(structured, text):
		result, _ = json.Marshal(text)
	case text == "" || spells(text, structured):
		result = r.StructuredContent
	default:
		result, _ = json.Marshal(struct {
			Content           string          `json:"content"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		}{text, r.StructuredContent})
	}
	return result, text, r.IsError
}

// blockText is one content block as text: a text block's text, a resource's text, and
// a line that names what else it is (an image, audio, a link, a binary resource).
func blockText(raw json.RawMessage) string {
	var b struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		MimeType string `json:"mimeType"`
		Data     string `json:"data"`
		URI      string `json:"uri"`
		Resource *struct {
			URI      string  `json:"uri"`
			MimeType string  `json:"mimeType"`
			Text     *string `json:"text"`
		} `json:"resource"`
	}
	if json.Unmarshal(raw, &b) != nil {
		return string(raw)
	}
	switch {
	case b.Type == "text":
		return b.Text
	case b.Type == "image" || b.Type == "audio":
		return fmt.Sprintf("[%s: %s, %d bytes]", b.Type, b.MimeType, len(b.Data)/4*3)
	case b.Type == "resource" && b.Resource != nil && b.Resource.Text != nil:
		return *b.Resource.Text
	case b.Type == "resource" && b.Resource != nil:
		return fmt.Sprintf("[resource: %s, %s]", b.Resource.URI, b.Resource.MimeType)
	case b.Type == "resource_link":
		return "[resource link: " + b.URI + "]"
	}
	return string(raw) // a kind of block this proxy does not know: as sent
}

// wraps is whether v is an object of one member whose value is text.
func wraps(v any, text string) bool {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return false
	}
	for _, e := range m {
		return e == text
	}
	return false
}

// spells is whether text is a JSON spelling of v.
func spells(text string, v any) bool {
	var t any
	return json.Unmarshal([]byte(text), &t) == nil && reflect.DeepEqual(t, v)
}
