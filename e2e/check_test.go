package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"time"
)

// wantCall is one tool call as the agent reported it to its hooks, and so what agmem must
// have recorded of it.
type wantCall struct {
	from      string // the raw payloads it was read from
	tool      string
	args      json.RawMessage
	result    json.RawMessage // what a call that did not fail returned
	failed    bool
	errorIs   string // the failed call's error, where the agent gave it as such
	errorHas  string // or text the error must hold, where the agent gave it inside other text
	session   string
	toolUseID string
	cwd       string
	duration  *int64 // ms, where the agent gave it
	timestamp string // where the agent gave the call's time
}

// wantEvent is one session event as the agent reported it.
type wantEvent struct {
	from    string
	name    string // as agmem names it
	text    string
	session string
}

// observation and event are what agmem replay --json --events prints (FORMAT.md
// §Observations, §Events).
type observation struct {
	ID         string          `json:"id"`
	SessionID  string          `json:"session_id"`
	Timestamp  string          `json:"timestamp"`
	ToolName   string          `json:"tool_name"`
	Arguments  json.RawMessage `json:"arguments"`
	Result     json.RawMessage `json:"result"`
	Source     string          `json:"source"`
	ToolUseID  string          `json:"tool_use_id"`
	Cwd        string          `json:"cwd"`
	DurationMS *int64          `json:"duration_ms"`
	Error      string          `json:"error"`
}

type event struct {
	ID        string            `json:"id"`
	SessionID string            `json:"session_id"`
	Event     string            `json:"event"`
	Text      string            `json:"text"`
	Attrs     map[string]string `json:"attrs"`
	Source    string            `json:"source"`
}

// replay is what agmem replay --json --events prints of a session.
func (w *world) replay(session string) (obs []observation, events []event) {
	w.t.Helper()
	for i, line := range w.replayLines(w.repo, session) {
		var probe map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &probe); err != nil {
			w.t.Fatalf("agmem replay --json line %d: %v: %s", i+1, err, line)
		}
		if _, ok := probe["tool_name"]; ok {
			var o observation
			if err := json.Unmarshal([]byte(line), &o); err != nil {
				w.t.Fatalf("agmem replay --json line %d: %v", i+1, err)
			}
			obs = append(obs, o)
			continue
		}
		var e event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			w.t.Fatalf("agmem replay --json line %d: %v", i+1, err)
		}
		events = append(events, e)
	}
	return obs, events
}

// replayLines are the lines agmem replay --json --events prints of a session in repo,
// which must write the text as recorded.
func (w *world) replayLines(repo, session string) []string {
	w.t.Helper()
	out := w.agmemOK("--repo", repo, "replay", "--session", session, "--json", "--events")
	if m := htmlEscape.FindString(out); m != "" {
		w.t.Errorf("agmem replay --json --session %s in %s writes %q where the text recorded has the character itself",
			session, repo, m[len(m)-6:])
	}
	return strings.Split(strings.TrimSpace(out), "\n")
}

// checkClone checks that a fresh clone of the memory repo, whose journal does not hold
// the session, replays it from git as the journal does.
func (w *world) checkClone(session string) {
	w.t.Helper()
	clone := filepath.Join(w.dir, "clone")
	if _, errOut, err := w.run("git", "clone", "-q", w.repo, clone); err != nil {
		w.t.Fatalf("git clone: %v: %s", err, errOut)
	}
	w.agmemOK("init", clone)
	fromJournal, fromGit := w.replayLines(w.repo, session), w.replayLines(clone, session)
	if len(fromGit) != len(fromJournal) {
		w.t.Errorf("a clone replays session %s from git in %d lines, the journal in %d", session, len(fromGit), len(fromJournal))
		return
	}
	for i := range fromGit {
		if !sameJSON(json.RawMessage(fromGit[i]), json.RawMessage(fromJournal[i])) {
			w.t.Errorf("a clone replays line %d of session %s from git as\n%s\nthe journal as\n%s", i+1, session, fromGit[i], fromJournal[i])
		}
	}
}

// htmlEscape is how Go's json.Marshal writes <, > and & by default; a backslash before
// it would make it text that holds a backslash.
var htmlEscape = regexp.MustCompile(`(^|[^\\])\\u00(3[cC]|3[eE]|26)`)

// sessionOf is the one session the agent's payloads name.
func (w *world) sessionOf(calls []wantCall, events []wantEvent) string {
	w.t.Helper()
	seen := map[string]bool{}
	for _, c := range calls {
		seen[c.session] = true
	}
	for _, e := range events {
		seen[e.session] = true
	}
	if len(seen) != 1 {
		w.t.Fatalf("the agent's payloads name %d sessions, want 1: %v", len(seen), seen)
	}
	for s := range seen {
		return s
	}
	return ""
}

// checkMemory flushes, then checks that the memory repo holds each call and event the
// agent reported, once, field for field, under its source; and nothing it did not report.
func (w *world) checkMemory(source string, calls []wantCall, events []wantEvent) {
	w.t.Helper()
	w.agmemOK("flush")
	session := w.sessionOf(calls, events)
	obs, got := w.replay(session)

	matched := make([]bool, len(obs))
	for _, c := range calls {
		var found []int
		for i, o := range obs {
			if c.toolUseID != "" && o.ToolUseID == c.toolUseID {
				found = append(found, i)
			}
		}
		if len(found) == 0 { // recorded without its tool_use_id, or the agent gives none
			for i, o := range obs {
				if o.ToolName == c.tool && sameJSON(o.Arguments, c.args) {
					found = append(found, i)
				}
			}
		}
		call := fmt.Sprintf("%s call from %s (tool_use_id %q)", c.tool, c.from, c.toolUseID)
		switch len(found) {
		case 0:
			w.t.Errorf("%s: not recorded", call)
			continue
		case 1:
		default:
			w.t.Errorf("%s: recorded %d times, want once", call, len(found))
		}
		for _, i := range found {
			matched[i] = true
		}
		w.checkObservation(call, source, c, obs[found[0]])
	}
	for i, o := range obs {
		if !matched[i] {
			w.t.Errorf("observation %s (%s %s) is of no call the agent reported", o.ID, o.ToolName, compact(o.Arguments))
		}
	}
	w.checkEvents(source, events, got)
	w.checkSource(source, session)
	w.checkRepo()
	w.checkClone(session)
}

// fieldCheck is one field of a recorded observation against what the agent reported.
type fieldCheck struct {
	field     string
	ok        bool
	got, want any
}

// proxySource is the source of what agmem mcp proxy records.
const proxySource = "mcp"

func (w *world) checkObservation(call, source string, c wantCall, o observation) {
	w.t.Helper()
	// An MCP call that the hook and agmem mcp proxy both saw is kept once, as whichever
	// came first (FORMAT.md §Identity): the proxy's holds the server's answer as text,
	// timed by the proxy.
	proxied := o.Source == proxySource && strings.HasPrefix(c.tool, "mcp__")
	if proxied {
		source = proxySource
	}
	checks := []fieldCheck{
		{"tool_name", o.ToolName == c.tool, o.ToolName, c.tool},
		{"arguments", sameJSON(o.Arguments, c.args), compact(o.Arguments), compact(c.args)},
		{"session_id", o.SessionID == c.session, o.SessionID, c.session},
		{"source", o.Source == source, o.Source, source},
		{"tool_use_id", o.ToolUseID == c.toolUseID, o.ToolUseID, c.toolUseID},
		{"cwd", o.Cwd == c.cwd, o.Cwd, c.cwd},
		{"failed (a non-empty error)", (o.Error != "") == c.failed, o.Error != "", c.failed},
	}
	switch {
	case !c.failed && proxied:
		var text string
		json.Unmarshal(o.Result, &text)
		line, _, _ := strings.Cut(text, "\n")
		checks = append(checks, fieldCheck{"result (the server's text, which the agent's result holds)",
			line != "" && strings.Contains(string(c.result), line), compact(o.Result), compact(c.result)})
	case !c.failed:
		checks = append(checks, fieldCheck{"result", sameJSON(o.Result, c.result), compact(o.Result), compact(c.result)})
	}
	if c.errorIs != "" {
		checks = append(checks, fieldCheck{"error", o.Error == c.errorIs, o.Error, c.errorIs})
	}
	if c.errorHas != "" {
		checks = append(checks, fieldCheck{"error (holding the agent's failure text)", strings.Contains(o.Error, c.errorHas), o.Error, "…" + c.errorHas + "…"})
	}
	if c.duration != nil && !proxied {
		checks = append(checks, fieldCheck{"duration_ms", o.DurationMS != nil && *o.DurationMS == *c.duration, deref(o.DurationMS), *c.duration})
	}
	if c.timestamp != "" {
		checks = append(checks, fieldCheck{"timestamp", sameInstant(o.Timestamp, c.timestamp), o.Timestamp, c.timestamp})
	}
	for _, ch := range checks {
		if !ch.ok {
			w.t.Errorf("%s: recorded with %s %s, want %s", call, ch.field, show(ch.got), show(ch.want))
		}
	}
}

// checkEvents checks that each session event the agent reported is recorded once, in
// order, with its text; and no other (but agmem's own ContextGiven).
func (w *world) checkEvents(source string, want []wantEvent, got []event) {
	w.t.Helper()
	names := map[string]bool{"ContextGiven": true}
	for _, e := range want {
		names[e.name] = true
	}
	byName := map[string][]event{}
	for _, e := range got {
		if !names[e.Event] {
			w.t.Errorf("event %s %s %q is of nothing the agent reported", e.ID, e.Event, e.Text)
		}
		byName[e.Event] = append(byName[e.Event], e)
	}
	seen := map[string]int{}
	for _, e := range want {
		i := seen[e.name]
		seen[e.name]++
		if i >= len(byName[e.name]) {
			w.t.Errorf("%s event from %s: not recorded (%d %s recorded)", e.name, e.from, len(byName[e.name]), e.name)
			continue
		}
		g := byName[e.name][i]
		if g.Text != e.text {
			w.t.Errorf("%s event from %s: recorded with text %q, want %q", e.name, e.from, g.Text, e.text)
		}
		if g.Source != source {
			w.t.Errorf("%s event from %s: recorded with source %q, want %q", e.name, e.from, g.Source, source)
		}
	}
	for name, n := range seen {
		if len(byName[name]) > n {
			w.t.Errorf("%s: recorded %d times, the agent reported it %d times", name, len(byName[name]), n)
		}
	}
}

// checkSource checks that the session, and each commit of it, says it is the agent's: agmem
// sessions, and the Agmem-Source trailer as git reads it.
func (w *world) checkSource(source, session string) {
	w.t.Helper()
	var listed struct {
		ID     string `json:"session_id"`
		Source string `json:"source"`
	}
	for _, line := range strings.Split(strings.TrimSpace(w.agmemOK("sessions", "--json")), "\n") {
		var s struct {
			ID     string `json:"session_id"`
			Source string `json:"source"`
		}
		if json.Unmarshal([]byte(line), &s) == nil && s.ID == session {
			listed = s
		}
	}
	if listed.ID == "" {
		w.t.Errorf("agmem sessions does not list session %s", session)
	} else if listed.Source != source {
		w.t.Errorf("agmem sessions lists session %s with source %q, want %q", session, listed.Source, source)
	}
	out, errOut, err := w.run("git", "-C", w.repo, "log", "--format=%H%n%(trailers:key=Agmem-Session,key=Agmem-Source)%x00")
	if err != nil {
		w.t.Fatalf("git log: %v: %s", err, errOut)
	}
	commits := 0
	for _, c := range strings.Split(out, "\x00") {
		trailers := map[string]string{}
		lines := strings.Split(strings.TrimSpace(c), "\n")
		for _, l := range lines[1:] {
			if k, v, ok := strings.Cut(l, ": "); ok {
				trailers[k] = v
			}
		}
		if trailers["Agmem-Session"] != session {
			continue
		}
		commits++
		if trailers["Agmem-Source"] != source {
			w.t.Errorf("commit %s of session %s: git reads Agmem-Source %q, want %q", lines[0], session, trailers["Agmem-Source"], source)
		}
	}
	if commits == 0 {
		w.t.Errorf("no commit has the trailer Agmem-Session: %s", session)
	}
}

// checkRepo checks the memory repo as agmem and git see it.
func (w *world) checkRepo() {
	w.t.Helper()
	if out, errOut, err := w.run(w.agmem, "verify"); err != nil {
		w.t.Errorf("agmem verify: %v\n%s%s", err, out, errOut)
	}
	if out, errOut, err := w.run("git", "-C", w.repo, "fsck", "--strict", "--no-progress"); err != nil || strings.TrimSpace(out+errOut) != "" {
		w.t.Errorf("git fsck --strict: %v\n%s%s", err, out, errOut)
	}
}

// checkMCPCallOnce checks that the MCP call of read_text_file of file-2.txt, which reached
// agmem from two sides (the agent's hook and agmem mcp proxy), is one observation over
// every session in the memory repo.
func (w *world) checkMCPCallOnce() {
	w.t.Helper()
	recorded := func(o observation) bool {
		return strings.HasSuffix(o.ToolName, "read_text_file") && strings.Contains(string(o.Arguments), "file-2.txt")
	}
	var found []string
	for _, line := range strings.Split(strings.TrimSpace(w.agmemOK("sessions", "--json")), "\n") {
		var s struct {
			ID string `json:"session_id"`
		}
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			w.t.Fatalf("agmem sessions --json: %v: %s", err, line)
		}
		obs, _ := w.replay(s.ID)
		for _, o := range obs {
			if recorded(o) {
				found = append(found, fmt.Sprintf("%s in session %s (source %s)", o.ID, o.SessionID, o.Source))
			}
		}
	}
	if len(found) != 1 {
		w.t.Errorf("the MCP call of read_text_file of file-2.txt, which the hook and the proxy both saw: %d observations in the memory repo, want 1: %s",
			len(found), strings.Join(found, "; "))
	}
}

// checkScript checks that the agent carried out every step of the script (the raw hook saw
// a call of each step's tool) and ran to the final answer.
func (w *world) checkScript(m *scriptedModel, calls []wantCall, stdout string) {
	w.t.Helper()
	requests, problems := m.report()
	for _, p := range problems {
		w.t.Errorf("scripted model: %s", p)
	}
	for i, s := range m.script {
		if s.tool == "" {
			continue
		}
		name := m.calledAs(i)
		if name == "" {
			w.t.Errorf("script step %d (%s): the agent never asked the model for it (%d requests)", i+1, s.what, requests)
			continue
		}
		if s.reported != "" {
			name = s.reported
		}
		reported := false
		for _, c := range calls {
			reported = reported || c.tool == name
		}
		if !reported {
			w.t.Errorf("script step %d (%s): the agent reported no call of %s to its hooks", i+1, s.what, name)
		}
	}
	if !strings.Contains(stdout, "AGMEM-E2E-FINAL") {
		w.t.Errorf("the agent's output does not hold the script's final answer: %s", tail(stdout))
	}
}

// checkMemorySearch checks that the agent's call of agmem's memory search got back what
// the memory repo held before the session.
func (w *world) checkMemorySearch(m *scriptedModel, calls []wantCall) {
	w.t.Helper()
	for i, s := range m.script {
		if s.server != "agmem" {
			continue
		}
		name := m.calledAs(i)
		for _, c := range calls {
			if c.tool == name && name != "" {
				if !strings.Contains(string(c.result), seedMarker) {
					w.t.Errorf("%s from %s: agmem's memory search answered %s, want what it remembers of %s", name, c.from, tail(string(c.result)), seedMarker)
				}
				return
			}
		}
		w.t.Errorf("script step %d (%s): no call of agmem's memory search was reported", i+1, s.what)
	}
}

func sameJSON(a, b json.RawMessage) bool {
	var va, vb any
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	return json.Unmarshal(a, &va) == nil && json.Unmarshal(b, &vb) == nil && reflect.DeepEqual(va, vb)
}

func sameInstant(a, b string) bool {
	ta, errA := time.Parse(time.RFC3339Nano, a)
	tb, errB := time.Parse(time.RFC3339Nano, b)
	return errA == nil && errB == nil && ta.Equal(tb)
}

func compact(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "(none)"
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	return mustJSON(v)
}

func deref(p *int64) any {
	if p == nil {
		return "(none)"
	}
	return *p
}

func show(v any) string {
	s := fmt.Sprint(v)
	if str, ok := v.(string); ok {
		s = fmt.Sprintf("%q", str)
	}
	if len(s) > 600 {
		s = s[:600] + "…"
	}
	return s
}

// checkRun makes every check of an agent's run: it carried out the script, the memory
// holds what it reported, agmem's memory server answered it, the MCP call both the hook
// and the proxy saw is kept once, and agmem's context reached the model.
func (w *world) checkRun(m *scriptedModel, source, stdout string, calls []wantCall, events []wantEvent) {
	w.t.Helper()
	w.checkScript(m, calls, stdout)
	w.checkMemory(source, calls, events)
	w.checkMemorySearch(m, calls)
	w.checkMCPCallOnce()
	w.checkContext(m)
}

// checkContext checks that what agmem's context hook gives at SessionStart (what the
// memory repo holds of seedMarker) reached the model by its first turn.
func (w *world) checkContext(m *scriptedModel) {
	w.t.Helper()
	if !m.sawTextAtStart(seedMarker) {
		w.t.Errorf("no request to the model up to its first turn holds what agmem's context hook gives at SessionStart (%s)", seedMarker)
	}
}
