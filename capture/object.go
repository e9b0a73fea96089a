package capture

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agmem/agmem/internal/jsonscan"
)

// member is a member name some input shape agmem reads has.
type member int

const (
	mHookEvent member = iota
	mSessionID
	mCwd
	mAgentID
	mAgentType
	mToolName
	mToolInput
	mToolResponse
	mToolUseID
	mError
	mDurationMS
	mToolCalls
	mSource
	mModel
	mReason
	mPrompt
	mLastMessage
	mTranscriptPath
	mPermissionMode
	mTurnID
	mID
	mTimestamp
	mArguments
	mResult
	mMemoryType
	mSummary
	mEvent
	mText
	mAttrs
	mPromptResponse
	mTrigger
	mLLMContent
	mConversationID
	mGenerationID
	mWorkspaceRoots
	mCommand
	mOutput
	mDuration
	mResultJSON
	mToolOutput
	mFilePath
	mEdits
	mStatus
	mMessage
	mPromptID
	mIsInterrupt
	mInterrupted
	mNoResult
	nMembers
)

// memberNames are the names of the members, as JSON spells them.
var memberNames = [nMembers]string{
	mHookEvent: "hook_event_name", mSessionID: "session_id", mCwd: "cwd", mAgentID: "agent_id",
	mAgentType: "agent_type", mToolName: "tool_name", mToolInput: "tool_input",
	mToolResponse: "tool_response", mToolUseID: "tool_use_id", mError: "error",
	mDurationMS: "duration_ms", mToolCalls: "tool_calls", mSource: "source", mModel: "model",
	mReason: "reason", mPrompt: "prompt", mLastMessage: "last_assistant_message",
	mTranscriptPath: "transcript_path", mPermissionMode: "permission_mode", mTurnID: "turn_id",
	mID: "id", mTimestamp: "timestamp", mArguments: "arguments", mResult: "result",
	mMemoryType: "memory_type", mSummary: "summary", mEvent: "event", mText: "text",
	mAttrs: "attrs", mPromptResponse: "prompt_response", mTrigger: "trigger",
	mLLMContent: "llmcontent", mConversationID: "conversation_id", mGenerationID: "generation_id",
	mWorkspaceRoots: "workspace_roots", mCommand: "command", mOutput: "output", mDuration: "duration",
	mResultJSON: "result_json", mToolOutput: "tool_output", mFilePath: "file_path", mEdits: "edits",
	mStatus: "status", mMessage: "message", mPromptID: "prompt_id", mIsInterrupt: "is_interrupt",
	mInterrupted: "interrupted", mNoResult: "no_result",
}

// members finds a member by its name in lower case.
var members = func() map[string]member {
	m := make(map[string]member, nMembers)
	for i, name := range memberNames {
		m[name] = member(i)
	}
	return m
}()

// object is one JSON object as Decode reads it: the text of each member any shape agmem
// reads has, found in one pass over the object, and read as the shape the object turns
// out to be needs it. Member names match whatever their ASCII letters' case, as Go's
// encoding/json matches them; a name with other than ASCII in it is no member agmem
// reads. Of a member given twice the last counts, as with encoding/json.
type object struct {
	raw   [nMembers][]byte // nil: absent
	whole []byte           // the object's text
}

// readObject reads data, which must be one JSON object.
func readObject(data []byte) (*object, error) {
	o := &object{whole: data}
	var skipErr error
	ok := jsonscan.Members(data, func(r *jsonscan.Scanner, name string) bool {
		v, err := r.Skip(1)
		if err != nil {
			skipErr = err
			return false
		}
		if m, known := memberOf(name); known {
			o.raw[m] = v
		}
		return true
	})
	switch {
	case errors.Is(skipErr, jsonscan.ErrTooDeep):
		return nil, fmt.Errorf("input is JSON nested deeper than %d containers", jsonscan.MaxDepth)
	case !ok:
		return nil, errors.New("input is not valid JSON")
	}
	return o, nil
}

func memberOf(name string) (member, bool) {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c >= utf8.RuneSelf {
			return 0, false
		} else if 'A' <= c && c <= 'Z' {
			name = strings.ToLower(name)
			break
		}
	}
	m, ok := members[name]
	return m, ok
}

// has says whether the member is there, whatever its value, null too.
func (o *object) has(m member) bool { return o.raw[m] != nil }

// set says whether the member is there with a value other than null.
func (o *object) set(m member) bool { return o.raw[m] != nil && string(o.raw[m]) != "null" }

// str reads a member that must be a string or null, as a string: "" for null or none.
func (o *object) str(m member) (string, error) {
	raw := o.raw[m]
	if raw == nil || string(raw) == "null" {
		return "", nil
	}
	if raw[0] != '"' {
		return "", fmt.Errorf("%q must be a string", memberNames[m])
	}
	r := jsonscan.New(raw)
	return r.Unquote()
}

// field is a member read as a string into dst.
type field struct {
	m   member
	dst *string
}

// strs reads members that must be strings or null, each into its field.
func (o *object) strs(fields ...field) error {
	for _, f := range fields {
		s, err := o.str(f.m)
		if err != nil {
			return err
		}
		*f.dst = s
	}
	return nil
}

// num reads a member that must be a number or null: nil for null or none.
func (o *object) num(m member) (*float64, error) {
	raw := o.raw[m]
	if raw == nil || string(raw) == "null" {
		return nil, nil
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || raw[0] == 't' || raw[0] == 'f' {
		return nil, fmt.Errorf("%q must be a number", memberNames[m])
	}
	return &f, nil
}

// value is a member's JSON text as it is, nil for none.
func (o *object) value(m member) json.RawMessage { return o.raw[m] }

// elements calls fn with r at each element of a member that must be a list of what
// fn reads, or null; fn says false for an element of another kind.
func (o *object) elements(m member, what string, fn func(r *jsonscan.Scanner) (bool, error)) error {
	raw := o.raw[m]
	if raw == nil || string(raw) == "null" {
		return nil
	}
	bad := fmt.Errorf("%q must be a list of %s", memberNames[m], what)
	r := jsonscan.New(raw)
	if r.Peek() != '[' {
		return bad
	}
	for more := r.Open(']'); more; {
		ok, err := fn(&r)
		if err != nil {
			return err
		}
		if !ok {
			return bad
		}
		if more, err = r.More(']'); err != nil {
			return err
		}
	}
	return nil
}

// objects reads a member that must be a list of objects, or null.
func (o *object) objects(m member) ([]*object, error) {
	var out []*object
	err := o.elements(m, "objects", func(r *jsonscan.Scanner) (bool, error) {
		if r.Peek() != '{' {
			return false, nil
		}
		v, err := r.Skip(2)
		if err != nil {
			return false, err
		}
		item, err := readObject(v)
		out = append(out, item)
		return err == nil, err
	})
	return out, err
}

// strings reads a member that must be a list of strings, or null.
func (o *object) strings(m member) ([]string, error) {
	var out []string
	err := o.elements(m, "strings", func(r *jsonscan.Scanner) (bool, error) {
		if r.Peek() != '"' {
			return false, nil
		}
		s, err := r.Unquote()
		out = append(out, s)
		return err == nil, err
	})
	return out, err
}

// stringMap reads a member that must be an object of strings, or null. Its member
// names are its own, matched as they are.
func (o *object) stringMap(m member) (map[string]string, error) {
	raw := o.raw[m]
	if raw == nil || string(raw) == "null" {
		return nil, nil
	}
	out := map[string]string{}
	bad := false
	ok := jsonscan.Members(raw, func(r *jsonscan.Scanner, name string) bool {
		if r.Peek() == 'n' {
			_, err := r.Literal()
			return err == nil
		}
		if r.Peek() != '"' {
			bad = true
			return false
		}
		s, err := r.Unquote()
		out[name] = s
		return err == nil
	})
	if !ok || bad {
		return nil, fmt.Errorf("%q must be an object of strings", memberNames[m])
	}
	return out, nil
}

// isTrue says whether member m is the JSON literal true.
func (o *object) isTrue(m member) bool {
	return string(o.value(m)) == "true"
}
