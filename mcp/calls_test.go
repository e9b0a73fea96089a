package mcp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// step is one line through the proxy: from the client (">") or the server ("<").
type step struct {
	dir  string
	line string
}

// want is what a test checks of a Call.
type want struct {
	tool, args, result, err string
}

func TestTrackerPairsEachCallWithItsAnswer(t *testing.T) {
	call := func(id, tool, args string) step {
		return step{">", `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`}
	}
	answer := func(id, text string) step {
		return step{"<", `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"` + text + `"}]}}`}
	}
	tests := []struct {
		name    string
		methods []string
		steps   []step
		end     string // calls still waiting end with this
		want    []want
	}{
		{name: "a call and its answer", steps: []step{call("1", "read", `{"path":"a"}`), answer("1", "text of a")},
			want: []want{{"read", `{"path":"a"}`, `"text of a"`, ""}}},
		{name: "answers in another order", steps: []step{call("1", "a", `{}`), call("2", "b", `{}`), answer("2", "B"), answer("1", "A")},
			want: []want{{"b", `{}`, `"B"`, ""}, {"a", `{}`, `"A"`, ""}}},
		{name: "a JSON-RPC error", steps: []step{call("7", "read", `{}`),
			{"<", `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"bad path"}}`}},
			want: []want{{"read", `{}`, `"bad path (JSON-RPC error -32602)"`, "bad path (JSON-RPC error -32602)"}}},
		{name: "isError", steps: []step{call("1", "read", `{}`),
			{"<", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ENOENT"}],"isError":true}}`}},
			want: []want{{"read", `{}`, `"ENOENT"`, "ENOENT"}}},
		{name: "the server's request under the client's id is no answer, nor is the client's answer to it",
			steps: []step{call("1", "ask", `{}`),
				{"<", `{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{}}`},
				{">", `{"jsonrpc":"2.0","id":1,"result":{"content":{"type":"text","text":"yes"}}}`},
				{"<", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1}}`},
				answer("1", "the client said yes")},
			want: []want{{"ask", `{}`, `"the client said yes"`, ""}}},
		{name: "ids are compared as sent: 1 is not \"1\"", steps: []step{call(`"1"`, "a", `{}`), call("1", "b", `{}`), answer("1", "B"), answer(`"1"`, "A")},
			want: []want{{"b", `{}`, `"B"`, ""}, {"a", `{}`, `"A"`, ""}}},
		{name: "cancelled, and the late answer not read", steps: []step{call("3", "slow", `{}`),
			{">", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"user pressed Esc"}}`},
			answer("3", "too late")},
			want: []want{{"slow", `{}`, `"cancelled by the client: user pressed Esc"`, "cancelled by the client: user pressed Esc"}}},
		{name: "batches both ways", steps: []step{
			{">", `[` + call("1", "a", `{}`).line + `,{"jsonrpc":"2.0","method":"notifications/initialized"},` + call("2", "b", `{}`).line + `]`},
			{"<", `[` + answer("2", "B").line + `,` + answer("1", "A").line + `]`}},
			want: []want{{"b", `{}`, `"B"`, ""}, {"a", `{}`, `"A"`, ""}}},
		{name: "other methods are not recorded", steps: []step{
			{">", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a"}}`},
			{"<", `{"jsonrpc":"2.0","id":1,"result":{"contents":[]}}`}}},
		{name: "unless asked for", methods: []string{"resources/read"}, steps: []step{
			{">", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a"}}`},
			{"<", `{"jsonrpc":"2.0","id":1,"result":{"contents":[]}}`}},
			want: []want{{"", `{"uri":"file:///a"}`, `{"contents":[]}`, ""}}},
		{name: "a result that is not a tool's is kept as sent", steps: []step{call("1", "odd", `{}`),
			{"<", `[{"jsonrpc":"2.0","id":1,"result":[1, {"content":"a"}]}]`}},
			want: []want{{"odd", `{}`, `[1, {"content":"a"}]`, ""}}},
		{name: "an answer escaped otherwise still unwraps", steps: []step{call("1", "read", `{}`),
			{"<", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"<a>é"}],"structuredContent":{"content" : "<a>é" }}}`}},
			want: []want{{"read", `{}`, `"<a>é"`, ""}}},
		{name: "lines that are not JSON-RPC are passed over", steps: []step{{">", "not json"}, {">", `{"id":1}`},
			{"<", "[1,2"}, call("1", "a", `{}`), answer("1", "A")},
			want: []want{{"a", `{}`, `"A"`, ""}}},
		{name: "an id used again ends the first call", steps: []step{call("1", "a", `{}`), call("1", "b", `{}`), answer("1", "B")},
			want: []want{{"a", `{}`, `"no answer: the client used its id again"`, "no answer: the client used its id again"}, {"b", `{}`, `"B"`, ""}}},
		{name: "calls with no answer end in the order they were made", steps: []step{call("9", "first", `{}`), call("2", "second", `{}`)},
			end: "no answer: the server ended",
			want: []want{{"first", `{}`, `"no answer: the server ended"`, "no answer: the server ended"},
				{"second", `{}`, `"no answer: the server ended"`, "no answer: the server ended"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []Call
			tr := newTracker(tt.methods, func(c Call) { got = append(got, c) })
			at := time.Unix(1000, 0)
			for _, s := range tt.steps {
				at = at.Add(time.Millisecond)
				if s.dir == ">" {
					tr.fromClient([]byte(s.line+"\n"), at)
				} else {
					tr.fromServer([]byte(s.line+"\n"), at)
				}
			}
			if tt.end != "" {
				tr.end(tt.end, at.Add(time.Millisecond))
			}
			if tr.inFlight() != 0 {
				t.Errorf("%d requests still in flight", tr.inFlight())
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d calls, want %d: %+v", len(got), len(tt.want), got)
			}
			for i, w := range tt.want {
				c := got[i]
				if c.Tool != w.tool || string(c.Arguments) != w.args || string(c.Result) != w.result || c.Error != w.err {
					t.Errorf("call %d = {%q %s %s %q}, want %+v", i, c.Tool, c.Arguments, c.Result, c.Error, w)
				}
				if c.Duration <= 0 {
					t.Errorf("call %d: duration %v", i, c.Duration)
				}
			}
		})
	}
}

// TestCallNamedAsTheAgentNamesIt reads the call's id, and its session where the request
// gives it, from the _meta Claude Code 2.1.332 and Codex 0.171.0 send: the ids their
// hooks record the same call by.
func TestCallNamedAsTheAgentNamesIt(t *testing.T) {
	for _, tt := range []struct{ name, meta, toolUseID, session string }{
		{"Claude Code", `{"claudecode/toolUseId":"toolu_01F","progressToken":2}`, "toolu_01F", ""},
		{"Codex", `{"callId":"call_abc","sessionId":"01a2-thread","threadId":"01a2-thread","progressToken":1}`, "call_abc", "01a2-thread"},
		{"Codex without its session", `{"callId":"call_abc"}`, "", ""},
		{"none", `{"progressToken":1}`, "", ""},
		{"not an object", `"x"`, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []Call
			tr := newTracker(nil, func(c Call) { got = append(got, c) })
			at := time.Unix(1000, 0)
			tr.fromClient([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":`+tt.meta+`}}`+"\n"), at)
			tr.fromServer([]byte(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hi"}]}}`+"\n"), at.Add(time.Millisecond))
			if len(got) != 1 || got[0].Tool != "echo" || string(got[0].Arguments) != `{"text":"hi"}` {
				t.Fatalf("got %+v, want the echo call", got)
			}
			if got[0].ToolUseID != tt.toolUseID || got[0].Session != tt.session {
				t.Errorf("named %q in %q, want %q in %q", got[0].ToolUseID, got[0].Session, tt.toolUseID, tt.session)
			}
		})
	}
}

func TestInFlightCountsEveryRequestOfTheClient(t *testing.T) {
	tr := newTracker(nil, func(Call) {})
	tr.fromClient([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), time.Now())
	tr.fromClient([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}}`), time.Now())
	tr.fromClient([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), time.Now())
	if n := tr.inFlight(); n != 2 {
		t.Fatalf("in flight: %d, want 2", n)
	}
	tr.fromServer([]byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`), time.Now())
	if n := tr.inFlight(); n != 1 {
		t.Fatalf("in flight after an answer: %d, want 1", n)
	}
}

func TestObservationNamesTheToolAfterTheServer(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	o := Call{Method: ToolsCall, Tool: "read_text_file", Arguments: json.RawMessage(`{"path":"a"}`),
		Result: json.RawMessage(`"x"`), Started: at, Duration: 1500 * time.Microsecond}.Observation("fs")
	if o.Tool != "mcp__fs__read_text_file" || o.Source != "mcp" || !o.Time.Equal(at) || o.Duration != 1500*time.Microsecond {
		t.Errorf("observation: %+v", o)
	}
	if o := (Call{Method: "resources/read", Started: at}).Observation("fs"); o.Tool != "mcp__fs__resources/read" || o.Result != nil || o.Arguments != nil {
		t.Errorf("another method: %+v", o)
	}
}

func TestToolResultsKeepTextAndStructuredContent(t *testing.T) {
	tests := []struct{ name, result, want, text string }{
		{"text blocks joined", `{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`, `"a\nb"`, "a\nb"},
		{"an image named, not kept", `{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"}]}`, `"[image: image/png, 3 bytes]"`, ""},
		{"a resource's text", `{"content":[{"type":"resource","resource":{"uri":"file:///a","text":"A"}}]}`, `"A"`, ""},
		{"a binary resource named", `{"content":[{"type":"resource","resource":{"uri":"file:///b","mimeType":"image/png","blob":"AAAA"}}]}`, `"[resource: file:///b, image/png]"`, ""},
		{"a link", `{"content":[{"type":"resource_link","uri":"file:///c","name":"c"}]}`, `"[resource link: file:///c]"`, ""},
		{"a block of a kind not known, named", `{"content":[{"type":"hologram","x":1}]}`, `"[hologram content]"`, ""},
		{"a number spelled as text", `{"content":[{"type":"text","text":"20"}],"structuredContent":20}`, `20`, ""},
		{"structured content spelled again as text", `{"content":[{"type":"text","text":"{\"t\": 20}"}],"structuredContent":{"t":20}}`, `{"t":20}`, ""},
		{"structured content that only wraps the text", `{"content":[{"type":"text","text":"hello"}],"structuredContent":{"content":"hello"}}`, `"hello"`, ""},
		{"structured content that holds the text and more", `{"content":[{"type":"text","text":"hello"}],"structuredContent":{"content":"hello","lines":1}}`,
			`{"content":"hello","structuredContent":{"content":"hello","lines":1}}`, ""},
		{"structured content alone", `{"content":[],"structuredContent":{"t":20}}`, `{"t":20}`, ""},
		{"structured content that says something else", `{"content":[{"type":"text","text":"warm"}],"structuredContent":{"t":20}}`,
			`{"content":"warm","structuredContent":{"t":20}}`, ""},
		{"no result", `null`, `""`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r *toolResult
			if err := json.Unmarshal([]byte(tt.result), &r); err != nil {
				t.Fatal(err)
			}
			got, text := r.kept()
			if string(got) != tt.want {
				t.Errorf("result %s, want %s", got, tt.want)
			}
			if tt.text != "" && text != tt.text {
				t.Errorf("text %q, want %q", text, tt.text)
			}
		})
	}
}

func TestServerName(t *testing.T) {
	tests := []struct {
		command string
		args    string
		want    string
	}{
		{"/usr/local/bin/mcp-server-git", "--repository .", "mcp-server-git"},
		{"npx", "-y @modelcontextprotocol/server-filesystem@2026.8.31 /home/ana", "server-filesystem"},
		{"npx", "-y @modelcontextprotocol/server-memory", "server-memory"},
		{"uvx", "mcp-server-fetch", "mcp-server-fetch"},
		{"python3", "-m mcp_server_time --local-timezone UTC", "mcp_server_time"},
		{"uv", "run weather.py", "weather"},
		{"node", "build/index.js", "index"},
		{`C:\tools\my server.exe`, "", "my_server"},
		{"npx", "", "npx"},
		{"ünïcode", "", "_n_code"},
	}
	for _, tt := range tests {
		if got := ServerName(tt.command, strings.Fields(tt.args)); got != tt.want {
			t.Errorf("ServerName(%q, %q) = %q, want %q", tt.command, tt.args, got, tt.want)
		}
	}
}

func TestIDKey(t *testing.T) {
	same := [][2]string{{`1`, `1.0`}, {`"é"`, `"\u00e9"`}, {` 7 `, `7`}}
	for _, p := range same {
		if idKey(json.RawMessage(p[0])) != idKey(json.RawMessage(p[1])) {
			t.Errorf("ids %s and %s are one id", p[0], p[1])
		}
	}
	for _, p := range [][2]string{{`1`, `"1"`}, {`12345678901234567890`, `12345678901234567891`}} {
		if idKey(json.RawMessage(p[0])) == idKey(json.RawMessage(p[1])) {
			t.Errorf("ids %s and %s are two ids", p[0], p[1])
		}
	}
	if (&message{ID: json.RawMessage(`null`)}).hasID() {
		t.Error("a null id is taken for an id")
	}
}
