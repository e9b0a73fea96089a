package capture

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agmem/agmem/internal/jsonscan"
	"github.com/agmem/agmem/memory"
)

// claudeHook holds the fields of every Claude Code hook event that agmem reads
// (FORMAT.md §Input); Codex sends the same events with the same fields, plus turn_id.
type claudeHook struct {
	HookEvent string
	SessionID string
	Cwd       string
	AgentID   string
	AgentType string
	claudeCall
	ToolCalls []claudeCall // PostToolBatch

	Source         string // SessionStart: startup|resume|clear|compact|fork
	Model          string
	Reason         string // SessionEnd
	Prompt         string // UserPromptSubmit
	LastMessage    string
	TranscriptPath string
	PermissionMode string
	TurnID         string // Codex
	PromptID       string // Claude Code 2.1: the prompt a call or an event came of

	source string // the agent: Claude Code, or Codex
}

type claudeCall struct {
	ToolName     string
	ToolInput    json.RawMessage
	ToolResponse json.RawMessage
	ToolUseID    string
	Error        *string
	Interrupted  bool // PostToolUseFailure: a person stopped the call
	DurationMS   *float64
	place        int  // in its PostToolBatch, from 1; 0 when alone
	noResult     bool // reported before it ran, with no result yet
}

// decodeClaudeHook reads a Claude Code hook payload, or a Codex one (source says which).
func decodeClaudeHook(o *object, event, source string, p Policy, now time.Time) (Decoded, error) {
	h := claudeHook{HookEvent: event, source: source}
	err := h.read(o)
	if err == nil {
		var calls []*object
		if calls, err = o.objects(mToolCalls); err == nil {
			for _, c := range calls {
				var call claudeCall
				if err = call.read(c); err != nil {
					break
				}
				call.place = len(h.ToolCalls) + 1
				h.ToolCalls = append(h.ToolCalls, call)
			}
		}
	}
	if err != nil {
		return Decoded{}, fmt.Errorf("%s hook payload: %w", source, err)
	}
	return h.decode(p, now)
}

func (h *claudeHook) read(o *object) error {
	err := o.strs(field{mSessionID, &h.SessionID}, field{mCwd, &h.Cwd}, field{mAgentID, &h.AgentID},
		field{mAgentType, &h.AgentType}, field{mSource, &h.Source}, field{mModel, &h.Model},
		field{mReason, &h.Reason}, field{mPrompt, &h.Prompt}, field{mLastMessage, &h.LastMessage},
		field{mTranscriptPath, &h.TranscriptPath}, field{mPermissionMode, &h.PermissionMode},
		field{mTurnID, &h.TurnID}, field{mPromptID, &h.PromptID})
	if err != nil {
		return err
	}
	return h.claudeCall.read(o)
}

func (c *claudeCall) read(o *object) error {
	if err := o.strs(field{mToolName, &c.ToolName}, field{mToolUseID, &c.ToolUseID}); err != nil {
		return err
	}
	c.ToolInput, c.ToolResponse = o.value(mToolInput), o.value(mToolResponse)
	c.Interrupted = o.isTrue(mIsInterrupt)
	if o.set(mError) {
		e, err := o.str(mError)
		if err != nil {
			return err
		}
		c.Error = &e
	}
	var err error
	c.DurationMS, err = o.num(mDurationMS)
	return err
}

// decode turns the payload into what agmem records of it.
func (h *claudeHook) decode(p Policy, now time.Time) (Decoded, error) {
	switch h.HookEvent {
	case "PostToolUse", "PostToolUseFailure":
		return h.observations([]claudeCall{h.claudeCall}, p, now)
	case "PostToolBatch":
		return h.observations(refused(h.ToolCalls), p, now)
	case "PreToolUse":
		if h.source == SourceCodex {
			// Codex reports a call it refuses (a patch that fails its check) in PreToolUse
			// alone: each call is kept from it, to be answered by its PostToolUse.
			c := h.claudeCall
			msg := "Codex reported this call but no result: it was refused, or did not finish"
			c.Error, c.ToolResponse, c.noResult = &msg, nil, true
			return h.observations([]claudeCall{c}, p, now)
		}
	case "SessionStart", "SessionEnd", "UserPromptSubmit", "Stop", "SubagentStop":
		if err := checkSession(h.SessionID); err != nil {
			return Decoded{}, err
		}
		e := h.event(now)
		p.sanitizeEvent(e)
		return Decoded{Entries: []memory.Entry{{Event: e}}}, nil
	}
	return Decoded{Skipped: []string{fmt.Sprintf("%s hook event %q is not recorded", h.source, h.HookEvent)}}, nil
}

// refused are the calls of a batch that the agent refused before running them (Claude
// Code: a Write to a file not read first, input that fails its schema), each with its
// error: those are reported in PostToolBatch alone. Every call that ran has its own
// PostToolUse or PostToolUseFailure, which says more than the batch's text, so the
// batch's copy of it is left out (were both kept, its tool_use_id would keep one).
func refused(calls []claudeCall) []claudeCall {
	var out []claudeCall
	for _, c := range calls {
		var text string
		if json.Unmarshal(c.ToolResponse, &text) != nil {
			continue
		}
		if msg, ok := strings.CutPrefix(strings.TrimSpace(text), "<tool_use_error>"); ok {
			msg = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(msg), "</tool_use_error>"))
			c.Error, c.ToolResponse = &msg, nil
			out = append(out, c)
		}
	}
	return out
}

func (h *claudeHook) observations(calls []claudeCall, p Policy, now time.Time) (Decoded, error) {
	var out Decoded
	for _, c := range calls {
		n := Native{
			SessionID:   h.SessionID,
			ToolName:    &c.ToolName,
			Arguments:   c.ToolInput,
			Result:      c.ToolResponse,
			Source:      h.source,
			ToolUseID:   c.ToolUseID,
			Cwd:         h.Cwd,
			AgentID:     h.AgentID,
			PromptID:    h.PromptID,
			DurationMS:  c.DurationMS,
			Interrupted: c.Interrupted,
			NoResult:    c.noResult,
			answers:     h.source == SourceCodex && h.HookEvent == "PostToolUse",
		}
		if c.Error != nil {
			n.Error = *c.Error
			n.Result = jsonscan.AppendString(nil, *c.Error, true)
		}
		d, err := FromNative(n, p, now)
		if err != nil {
			if c.place > 0 {
				err = fmt.Errorf("tool call %d: %w", c.place, err)
			}
			return Decoded{}, err
		}
		out.Entries = append(out.Entries, d.Entries...)
		out.Skipped = append(out.Skipped, d.Skipped...)
	}
	return out, nil
}

func (h *claudeHook) event(now time.Time) *memory.Event {
	var text string
	switch h.HookEvent {
	case "UserPromptSubmit":
		text = h.Prompt
	case "SessionEnd":
		text = h.Reason
	case "Stop", "SubagentStop":
		text = h.LastMessage
	}
	return newEvent(h.HookEvent, h.SessionID, h.source, text, now, map[string]string{
		"start_source": h.Source, "model": h.Model, "cwd": h.Cwd, "agent_id": h.AgentID,
		"agent_type": h.AgentType, "transcript_path": h.TranscriptPath,
		"permission_mode": h.PermissionMode, "turn_id": h.TurnID, "prompt_id": h.PromptID,
	})
}
