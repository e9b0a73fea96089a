package capture

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/agmem/agmem/internal/jsonscan"
	"github.com/agmem/agmem/memory"
)

// geminiHook holds the fields of Gemini CLI's hook payloads that agmem reads
// (FORMAT.md §Input): every event carries session_id, cwd, transcript_path,
// hook_event_name and an ISO 8601 timestamp.
type geminiHook struct {
	HookEvent      string
	SessionID      string
	Cwd            string
	Timestamp      string
	TranscriptPath string
	ToolName       string
	ToolInput      json.RawMessage
	// ToolResponse is {llmContent (what the model saw: the result), returnDisplay,
	// error (a string or {message, type})}, or, in some builds, the result itself.
	ToolResponse   json.RawMessage
	Prompt         string // BeforeAgent, AfterAgent
	PromptResponse string // AfterAgent
	Trigger        string // SessionStart: startup|resume|clear; SessionEnd: exit|clear
	Source         string
	Reason         string
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

func decodeGeminiHook(o *object, event string, p Policy, now time.Time) (Decoded, error) {
	h := geminiHook{HookEvent: event, ToolInput: o.value(mToolInput), ToolResponse: o.value(mToolResponse)}
	err := o.strs(field{mSessionID, &h.SessionID}, field{mCwd, &h.Cwd}, field{mTimestamp, &h.Timestamp},
		field{mTranscriptPath, &h.TranscriptPath}, field{mToolName, &h.ToolName}, field{mPrompt, &h.Prompt},
		field{mPromptResponse, &h.PromptResponse}, field{mTrigger, &h.Trigger}, field{mSource, &h.Source},
		field{mReason, &h.Reason})
	if err != nil {
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
	// The result is what the model saw, when the response says; else the response.
	result := h.ToolResponse
	var response *object
	if len(result) > 0 && result[0] == '{' {
		if r, err := readObject(result); err == nil && (r.has(mLLMContent) || r.has(mError)) {
			response, result = r, r.value(mLLMContent)
		}
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
	if response != nil {
		if msg := errorText(response); msg != "" {
			n.Error = msg
			if len(n.Result) == 0 {
				n.Result = jsonscan.AppendString(nil, msg, true)
			}
		}
	}
	if n.Error == "" && h.ToolName == "run_shell_command" {
		// It reports a command's failure only in what the model saw.
		n.Error = exitFailure(memory.JSONText(n.Result))
	}
	return FromNative(n, p, at)
}

// errorText reads the response's error, given as a string or as an object with a
// message.
func errorText(response *object) string {
	if s, err := response.str(mError); err == nil {
		return s
	}
	raw := response.value(mError)
	if obj, err := readObject(raw); err == nil {
		if msg, err := obj.str(mMessage); err == nil && msg != "" {
			return msg
		}
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

// exitLine is the line of Gemini CLI's shell result that gives the command's exit
// status, in the footer after its output: the line and the footer's other lines to the
// end, so that a line of the command's own output that looks like it is not taken.
// Compiled when first asked for, not as agmem-record starts: that was most of what
// starting this package cost, for the hooks of every other agent too.
var exitLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\nExit Code: (-?[0-9]+)\n(?:(?:Signal|Error|Background PIDs|Process Group PGID): [^\n]*\n)*(?:</untrusted_context>\s*)?\z`)
})

// exitFailure is "Exit Code: N" when run_shell_command's result reports a command that
// exited with N, not 0; else "".
func exitFailure(text string) string {
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	m := exitLine().FindStringSubmatch(text)
	if m == nil || m[1] == "0" {
		return ""
	}
	return "Exit Code: " + m[1]
}
