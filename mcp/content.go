package mcp

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// toolResult reads the result of a tools/call: what an observation keeps of it (the
// text of its content as a JSON string; its structured content as JSON, with the text
// beside it unless the structured content already says it), the text, and isError.
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
	switch structured := r.StructuredContent; {
	case len(structured) == 0 || string(structured) == "null":
		result, _ = json.Marshal(text)
	case says(structured, text):
		result = structured
	default:
		result, _ = json.Marshal(struct {
			Content           string          `json:"content"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		}{text, structured})
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

// says is whether the structured content v already holds text: text is empty, a JSON
// spelling of v (as a tool writes its structured content again for older clients), or
// one of v's strings (as the filesystem server's {"content": text}).
func says(v json.RawMessage, text string) bool {
	var a, b any
	if text == "" || json.Unmarshal(v, &b) != nil {
		return text == ""
	}
	return json.Unmarshal([]byte(text), &a) == nil && reflect.DeepEqual(a, b) || holds(b, text)
}

func holds(v any, s string) bool {
	switch v := v.(type) {
	case string:
		return v == s
	case []any:
		for _, e := range v {
			if holds(e, s) {
				return true
			}
		}
	case map[string]any:
		for _, e := range v {
			if holds(e, s) {
				return true
			}
		}
	}
	return false
}
