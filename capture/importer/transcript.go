package importer

import (
	"encoding/json"
	"strings"

	"github.com/agmem/agmem/capture"
)

// transcriptLine is one line of a Claude Code transcript, as far as agmem reads it: a
// message in the Anthropic Messages API's shape.
type transcriptLine struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionId"`
	Timestamp string `json:"timestamp"`
	Cwd       string `json:"cwd"`
	// Lines the person did not type: Claude Code's own notes, a subagent's, the
	// summary that starts a compacted session.
	IsMeta           bool `json:"isMeta"`
	IsSidechain      bool `json:"isSidechain"`
	IsCompactSummary bool `json:"isCompactSummary"`
	Message          struct {
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

// transcript pairs each tool_use block of a Claude Code transcript with the
// tool_result that answers it, as one call. Lines it cannot read are counted, as are
// calls no result answers (those left in calls at the end).
type transcript struct {
	f     *File
	calls map[string]pending
}

type pending struct {
	use  block
	line transcriptLine
}

// line reads one line of the transcript, and returns the prompt it holds, or the calls
// it answers.
func (t *transcript) line(raw []byte) []Item {
	var l transcriptLine
	if json.Unmarshal(raw, &l) != nil || !knownTypes[l.Type] {
		t.f.NotUnderstood++
		return nil
	}
	if p := prompt(l); p != nil {
		return []Item{{Object: p, Prompt: true}}
	}
	var blocks []block
	if json.Unmarshal(l.Message.Content, &blocks) != nil {
		return nil
	}
	// toolUseResult belongs to the line's result only when it has one.
	var toolUseResult json.RawMessage
	if results := countResults(blocks); results == 1 {
		toolUseResult = l.ToolUseResult
	}
	if t.calls == nil {
		t.calls = map[string]pending{}
	}
	var answered []Item
	for _, b := range blocks {
		switch {
		case b.Type == "tool_use" && l.Type == "assistant" && b.ID != "":
			t.calls[b.ID] = pending{b, l}
		case b.Type == "tool_result" && l.Type == "user":
			c, ok := t.calls[b.ToolUseID]
			if !ok {
				t.f.NotUnderstood++
				continue
			}
			delete(t.calls, b.ToolUseID)
			answered = append(answered, Item{Call: call(c.use, c.line, b, toolUseResult)})
		}
	}
	return answered
}

// prompt is the UserPromptSubmit event of a line the person typed, as the hook would
// have recorded it but dated as the line is (so that it is the same entry at every
// import); nil for any other line. A prompt is a user message's text: a string, or
// blocks of text and images, no tool result among them.
func prompt(l transcriptLine) []byte {
	if l.Type != "user" || l.IsMeta || l.IsSidechain || l.IsCompactSummary || l.SessionID == "" || l.Timestamp == "" {
		return nil
	}
	var text string
	if json.Unmarshal(l.Message.Content, &text) != nil {
		var blocks []block
		if json.Unmarshal(l.Message.Content, &blocks) != nil {
			return nil
		}
		var parts []string
		for _, b := range blocks {
			switch b.Type {
			case "text":
				parts = append(parts, b.Text)
			case "image":
			default:
				return nil
			}
		}
		text = strings.Join(parts, "\n")
	}
	if strings.TrimSpace(text) == "" || notTyped(text) {
		return nil
	}
	e := map[string]any{"event": "UserPromptSubmit", "session_id": l.SessionID, "timestamp": l.Timestamp,
		"text": text, "source": capture.SourceClaudeCode}
	if l.Cwd != "" {
		e["attrs"] = map[string]string{"cwd": l.Cwd}
	}
	out, _ := json.Marshal(e)
	return out
}

// notTyped says whether a user line's text is Claude Code's record of something other
// than a prompt, which no UserPromptSubmit hook is given: a slash command it ran itself
// (/model), a command's or a shell's output, an interruption.
func notTyped(text string) bool {
	text = strings.TrimSpace(text)
	for _, mark := range []string{"<command-name>", "<command-message>", "<command-args>", "<local-command-",
		"<bash-input>", "<bash-stdout>", "<bash-stderr>", "[Request interrupted by user"} {
		if strings.HasPrefix(text, mark) {
			return true
		}
	}
	return false
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

// call is a tool_use and the tool_result that answered it, as the native observation
// of the call, dated as the tool_use is.
func call(use block, at transcriptLine, result block, toolUseResult json.RawMessage) *capture.Native {
	n := &capture.Native{
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
	return n
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
