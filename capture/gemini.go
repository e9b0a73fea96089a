package capture

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/agmem/agmem/memory"
)

// geminiHook holds the fields of Gemini CLI's hook payloads that agmem reads
// (NOTES.md §Hooks): every event carries session_id, cwd, transcript_path,
// hook_event_name and an ISO 8601 timestamp.
type geminiHook struct {
	HookEvent      string          `json:"hook_event_name"`
	SessionID      string          `json:"session_id"`
	Cwd            string          `json:"cwd"`
	Timestamp      string          `json:"timestamp"`
	TranscriptPath string          `json:"transcript_path"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	// ToolResponse is {llmContent (what the model saw: the result), returnDisplay,
	// error (a string or {message, type})}, or, in some builds, the result itself.
	ToolResponse   json.RawMessage `json:"tool_response"`
	Prompt         string          `json:"prompt"`          // BeforeAgent, AfterAgent
	PromptResponse string          `json:"prompt_response"` // AfterAgent
	Trigger        string          `json:"trigger"`         // SessionStart: startup|resume|clear; SessionEnd: exit|clear
	Source         string          `json:"source"`
	Reason         string          `json:"reason"`
}

// geminiEvents are the events only Gemini CLI sends; it shares SessionStart,
// SessionEnd, Notification and PreCompress's names with Claude Code, and is told
// from it there by its timestamp.
var geminiEvents = map[string]bool{"BeforeTool": true, "AfterTool": true, "BeforeAgent": true,
	"AfterAgent": true, "BeforeModel": true, "AfterModel": true, "BeforeToolSelection": true}

func isGeminiHook(event string, hasTimestamp bool) bool {
	switch event {
	case "SessionStart", "SessionEnd", "Notification", "PreCompress":
		return hasTimestamp
	}
	return geminiEvents[event]
}

func decodeGeminiHook(data []byte, p Policy, now time.Time) (Decoded, error) {
	var h geminiHook
	if err := json.Unmarshal(data, &h); err != nil {
		return Decoded{}, fmt.Errorf("gemini cli hook payload: %w", err)
	}
	if err := checkSession(h.SessionID); err != nil {
		return Decoded{}, err
	}
	at, dated := now, false
	if t, err := parseTime(h.Timestamp); err == nil {
		at, dated = t, true
	}
	attrs := map[string]string{"cwd": h.Cwd, "transcript_path": h.TranscriptPath, "agent_event": h.HookEvent}
	var name, text string
	switch h.HookEvent {
	case "AfterTool":
		return h.observation(p, at, dated)
	case "BeforeAgent":
		name, text = "UserPromptSubmit", h.Prompt
	case "AfterAgent":
		name, text = "Stop", h.PromptResponse
	case "SessionStart":
		name, attrs["start_source"] = "SessionStart", firstOf(h.Trigger, h.Source)
	case "SessionEnd":
		name, text = "SessionEnd", firstOf(h.Reason, h.Trigger)
	default:
		return Decoded{Skipped: []string{fmt.Sprintf("gemini cli hook event %q is not recorded", h.HookEvent)}}, nil
	}
	e := newEvent(name, h.SessionID, SourceGemini, text, at, attrs)
	p.sanitizeEvent(e)
	return Decoded{Entries: []memory.Entry{{Event: e}}, Dated: dated}, nil
}

func (h *geminiHook) observation(p Policy, at time.Time, dated bool) (Decoded, error) {
	var response struct {
		LLMContent json.RawMessage `json:"llmContent"`
		Error      json.RawMessage `json:"error"`
	}
	result := h.ToolResponse
	if json.Unmarshal(h.ToolResponse, &response) == nil && (response.LLMContent != nil || response.Error != nil) {
		result = response.LLMContent
	}
	n := Native{
		SessionID: h.SessionID,
		ToolName:  &h.ToolName,
		Arguments: h.ToolInput,
		Result:    result,
		Source:    SourceGemini,
		Cwd:       h.Cwd,
	}
	if dated {
		n.Timestamp = at.Format(time.RFC3339Nano)
	}
	if msg := errorText(response.Error); msg != "" {
		n.Error = msg
		if len(n.Result) == 0 {
			n.Result, _ = json.Marshal(msg)
		}
	}
	return FromNative(n, p, at)
}

// errorText reads an error given as a string or as an object with a message.
func errorText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Message != "" {
		return obj.Message
	}
	if t := memory.JSONText(raw); t != "" && t != "{}" {
		return t
	}
	return ""
}

func firstOf(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
