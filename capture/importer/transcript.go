package importer

import (
	"bufio"
	"encoding/json"
	"strings"
	"time"

	"github.com/agmem/agmem/capture"
)

// transcriptLine is one line of a Claude Code transcript, as far as agmem reads it
// (NOTES.md §Hooks): a message in the Anthropic Messages API's shape.
type transcriptLine struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionId"`
	Timestamp string `json:"timestamp"`
	Cwd       string `json:"cwd"`
	Message   struct {
		Content json.RawMessage `json:"content"` // a string, or a list of blocks
	} `json:"message"`
	// ToolUseResult is what a PostToolUse hook gets as tool_response, when the
	// transcript keeps it.
	ToolUseResult json.RawMessage `json:"toolUseResult"`
}

type block struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`    // tool_use
	Name      string          `json:"name"`  // tool_use
	Input     json.RawMessage `json:"input"` // tool_use
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"` // tool_result: a string or blocks
	IsError   bool            `json:"is_error"`
	Text      string          `json:"text"`
}

// knownTypes are the transcript line types agmem understands, though it takes tool
// calls only from user and assistant messages.
var knownTypes = map[string]bool{"user": true, "assistant": true, "summary": true, "system": true, "file-history-snapshot": true}

// transcript pairs each tool_use block with the tool_result that answers it, and
// records the pair as one call. Lines it cannot read are counted, as are calls no
// result answers.
func (r *reader) transcript(br *bufio.Reader) error {
	type pending struct {
		use  block
		line transcriptLine
	}
	calls := map[string]pending{}
	err := eachLine(br, func(raw []byte) {
		var l transcriptLine
		if json.Unmarshal(raw, &l) != nil || !knownTypes[l.Type] {
			r.f.NotUnderstood++
			return
		}
		var blocks []block
		if json.Unmarshal(l.Message.Content, &blocks) != nil {
			return // a plain text message: no tool call in it
		}
		// toolUseResult belongs to the line's result only when it has one.
		var toolUseResult json.RawMessage
		if results := countResults(blocks); results == 1 {
			toolUseResult = l.ToolUseResult
		}
		for _, b := range blocks {
			switch {
			case b.Type == "tool_use" && l.Type == "assistant" && b.ID != "":
				calls[b.ID] = pending{b, l}
			case b.Type == "tool_result" && l.Type == "user":
				c, ok := calls[b.ToolUseID]
				if !ok {
					r.f.NotUnderstood++
					continue
				}
				delete(calls, b.ToolUseID)
				r.add(call(c.use, c.line, b, toolUseResult, r.p, r.now), len(raw))
			}
		}
	})
	r.f.NotUnderstood += len(calls)
	return err
}

func countResults(blocks []block) int {
	n := 0
	for _, b := range blocks {
		if b.Type == "tool_result" {
			n++
		}
	}
	return n
}

func call(use block, at transcriptLine, result block, toolUseResult json.RawMessage, p capture.Policy, now time.Time) decoded {
	n := capture.Native{
		SessionID: at.SessionID,
		Timestamp: at.Timestamp,
		ToolName:  &use.Name,
		Arguments: use.Input,
		Result:    toolUseResult,
		Source:    capture.SourceClaudeCode,
		ToolUseID: use.ID,
		Cwd:       at.Cwd,
	}
	text := resultText(result.Content)
	if len(n.Result) == 0 || string(n.Result) == "null" {
		n.Result, _ = json.Marshal(text)
	}
	if result.IsError {
		n.Error = text
		n.Result, _ = json.Marshal(text)
	}
	d, err := capture.FromNative(n, p, now)
	if err == nil {
		d.IdentifyBy([]byte(at.SessionID+"\x00"+use.ID), at.Timestamp != "")
	}
	return decoded{d, err}
}

// resultText is a tool_result's content as text: a string as it is, a list of blocks
// as their text joined by newlines.
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []block
	if json.Unmarshal(raw, &blocks) != nil {
		return string(raw)
	}
	var parts []string
	for _, b := range blocks {
		if b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}
