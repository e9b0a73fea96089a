package render

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agmem/agmem/memory"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

var when = time.Date(2026, 3, 14, 9, 26, 53, 589_000_000, time.UTC)

func ms(n int64) *int64 { return &n }

// goldenObservations are the shapes agmem records most, plus the ones that are hard to
// render.
var goldenObservations = []struct {
	name string
	obs  memory.Observation
}{
	{"claude-bash", memory.Observation{
		ID: "01JPB2N3V4W5X6Y7Z8A9B0C1D2", SessionID: "7f9c2ba4-e88f-4c6b-9a1e-3d2f1c0b5a68",
		Timestamp: when, ToolName: "Bash", MemoryType: memory.Episodic,
		Arguments: json.RawMessage(`{"command":"go test ./...","description":"Run the tests"}`),
		Result:    json.RawMessage(`{"stdout":"ok  \tgithub.com/ana/blog\t0.412s\n","stderr":"","interrupted":false}`),
		Summary:   "Bash command=go test ./...",
		Source:    "claude-code", ToolUseID: "toolu_01ABCdefGHIjklMNOpqrSTU", Cwd: "/home/ana/blog",
		DurationMS: ms(1834),
	}},
	{"semantic-read", memory.Observation{
		ID: "01JPB2N3V4W5X6Y7Z8A9B0C1D3", SessionID: "7f9c2ba4-e88f-4c6b-9a1e-3d2f1c0b5a68",
		Timestamp: when.Add(2 * time.Second), ToolName: "Read", MemoryType: memory.Semantic,
		Arguments: json.RawMessage(`{"file_path":"/home/ana/blog/README.md"}`),
		Result:    mustJSON(strings.Repeat("# Blog\n\nA small static site, built with Hugo. ", 15)),
		Summary:   "Read file=/home/ana/blog/README.md",
		Source:    "claude-code",
	}},
	{"procedural-todowrite", memory.Observation{
		ID: "01JPB2N3V4W5X6Y7Z8A9B0C1D4", SessionID: "7f9c2ba4-e88f-4c6b-9a1e-3d2f1c0b5a68",
		Timestamp: when.Add(3 * time.Second), ToolName: "TodoWrite", MemoryType: memory.Procedural,
		Arguments: json.RawMessage(`{"todos":[{"content":"Write the post","status":"in_progress"},{"content":"Publish","status":"pending"}]}`),
		Result:    mustJSON("Todos have been modified successfully. Ensure that you continue to use the todo list."),
		AgentID:   "agent-3",
	}},
	{"failed-bash", memory.Observation{
		ID: "0197f3a2-5c1d-7e4b-8a9f-0123456789ab", SessionID: "7f9c2ba4-e88f-4c6b-9a1e-3d2f1c0b5a68",
		Timestamp: when.Add(4*time.Second + 7), ToolName: "Bash", MemoryType: memory.Episodic,
		Arguments: json.RawMessage(`{"command":"go build ./cmd/site"}`),
		Error:     "Exit code 1\r\ngo: cannot find main module, but found .git/config in /home/ana\r\n\tto create a module there, run:\r\n\tgo mod init",
		Source:    "claude-code", DurationMS: ms(95),
	}},
	{"backticks", memory.Observation{
		ID: "01JPB2N3V4W5X6Y7Z8A9B0C1D5", SessionID: "s1",
		Timestamp: when.Add(5 * time.Second), ToolName: "mcp__docs__`render`", MemoryType: memory.Semantic,
		Arguments: json.RawMessage("{\"query\":\"how to fence ``` in markdown\"}"),
		Result:    mustJSON("Use a longer fence:\n\n`````markdown\n```go\nfmt.Println(\"hi\")\n```\n`````\n\nDone."),
		Summary:   "fences ```\n# not a heading",
	}},
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func TestMarkdownGolden(t *testing.T) {
	for _, tc := range goldenObservations {
		t.Run(tc.name, func(t *testing.T) {
			got := Markdown(&tc.obs)
			golden := filepath.Join("testdata", tc.name+".md")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to write it)", err)
			}
			if string(got) != string(want) {
				t.Errorf("Markdown differs from %s (run go test -update if intended):\n%s", golden, got)
			}
			r := readRendered(t, got)
			checkBody(t, r, tc.obs.Error != "")
		})
	}
}

// nasty is text that breaks naive YAML, markdown and file names.
var nasty = []string{
	"Bash",
	"line one\nline two",
	"---",
	"x\n---\ntool_name: forged",
	"key: value",
	`say "hi"`,
	`back\slash\`,
	"# comment",
	"{flow: map}",
	"[flow, seq]",
	"&anchor",
	"*alias",
	"!tag",
	"| literal",
	"> folded",
	"%YAML 1.2",
	"@reserved",
	"`backtick` and ``` fence",
	"tab\there",
	"del\x7fhere",
	"nel\u0085and c1\u009b",
	"ls\u2028ps\u2029bom\ufeff",
	"nonchars \uffff \ufffe",
	"bad utf-8 \xff\xfe\xc3",
	"nul\x00bell\x07esc\x1b",
	"cr\r\nlf",
	"emoji 🦫 and 中文",
	"   leading and trailing   ",
	"",
	"null",
	"true",
	"0x1F",
	"1.0",
	"~",
	"'single'",
	"? complex",
	"- item",
	"...",
}

func TestFrontmatterRoundTrip(t *testing.T) {
	for _, s := range nasty {
		o := memory.Observation{
			ID: "01JPB2N3V4W5X6Y7Z8A9B0C1D2", SessionID: s, Timestamp: when, ToolName: s,
			MemoryType: memory.Type(s), Source: s, ToolUseID: s, Cwd: s, AgentID: s, PromptID: s, Summary: s,
			Arguments: json.RawMessage(`{}`), Error: s, DurationMS: ms(-7),
			Redactions: 3, Withheld: s, Truncated: map[string]int{s: 5, "result": 9},
		}
		r := readRendered(t, Markdown(&o))
		want := map[string]any{
			"schema_version": "1.0",
			"memory_type":    valid(s),
			"observation_id": o.ID,
			"session_id":     valid(s),
			"timestamp":      "2026-03-14T09:26:53.589Z",
			"tool_name":      valid(s),
			"auto_captured":  true,
			"duration_ms":    -7,
			"redactions":     3,
		}
		if s != "" {
			for _, k := range []string{"source", "tool_use_id", "cwd", "agent_id", "prompt_id", "withheld"} {
				want[k] = valid(s)
			}
			want["failed"] = true
		}
		want["truncated"] = map[string]any{valid(s): 5, "result": 9}
		if len(r.front) != len(want) {
			t.Errorf("%q: frontmatter has %d keys, want %d: %v", s, len(r.front), len(want), r.front)
		}
		for k, v := range want {
			if !reflect.DeepEqual(r.front[k], v) {
				t.Errorf("%q: %s = %#v, want %#v", s, k, r.front[k], v)
			}
		}
		checkBody(t, r, s != "")
		if tool := r.outside[5]; tool != "**Tool:** " {
			if got := decodeCodeSpan(t, strings.TrimPrefix(tool, "**Tool:** ")); got != oneLine(s) {
				t.Errorf("%q: code span reads back as %q", s, got)
			}
		}
	}
}

// valid is s as it survives a trip through valid UTF-8: one U+FFFD per bad byte.
func valid(s string) string { return string([]rune(s)) }

func TestFrontmatterKeyOrder(t *testing.T) {
	o := goldenObservations[0].obs
	o.Error, o.AgentID, o.Withheld, o.Truncated = "boom", "a1", "**/.env*", map[string]int{"result": 2 << 20}
	o.PromptID, o.Interrupted = "p1", true
	var keys []string
	for _, line := range strings.Split(string(Markdown(&o)), "\n")[1:] {
		if line == "---" {
			break
		}
		k, _, _ := strings.Cut(line, ":")
		keys = append(keys, k)
	}
	want := "schema_version memory_type observation_id session_id timestamp tool_name auto_captured source tool_use_id cwd agent_id prompt_id duration_ms failed interrupted redactions withheld truncated   \"result\""
	if got := strings.Join(keys, " "); got != want {
		t.Errorf("keys:\n got %s\nwant %s", got, want)
	}
}

func TestFenceSafety(t *testing.T) {
	contents := []string{
		"",
		"plain",
		"```",
		"````",
		"```\n````\n`````",
		"text\n```\nafter a would-be close",
		"   ```",
		"```json\n{}\n```",
		"``````````x",
		"ends with a fence\n```",
		"`",
		"\n\n",
	}
	for _, c := range contents {
		o := memory.Observation{
			ID: "01JPB2N3V4W5X6Y7Z8A9B0C1D2", SessionID: "s", Timestamp: when, ToolName: "t",
			Arguments: mustJSON(map[string]string{"x": c}), Result: mustJSON(c), Error: c,
		}
		r := readRendered(t, Markdown(&o))
		checkBody(t, r, c != "")
		last := len(r.blocks) - 1
		if r.blocks[last].content != c || r.blocks[last].info != "" {
			t.Errorf("result %q read back as %+v", c, r.blocks[last])
		}
		if c != "" && r.blocks[1].content != c {
			t.Errorf("error %q read back as %q", c, r.blocks[1].content)
		}
		if r.blocks[0].info != "json" {
			t.Errorf("arguments fence info = %q", r.blocks[0].info)
		}
		var args map[string]string
		if err := json.Unmarshal([]byte(r.blocks[0].content), &args); err != nil || args["x"] != c {
			t.Errorf("arguments %q read back as %q (%v)", c, r.blocks[0].content, err)
		}
	}
}

func TestMarkdownBody(t *testing.T) {
	long := strings.Repeat("é", 501)
	tests := []struct {
		name   string
		obs    memory.Observation
		result string // the result block, as read back
		head   string
	}{
		{"no result", memory.Observation{ToolName: "Bash"}, "", "# Bash"},
		{"null result", memory.Observation{ToolName: "Bash", Result: json.RawMessage("null")}, "", "# Bash"},
		{"string result", memory.Observation{ToolName: "x", Result: mustJSON("a\r\nb\rc\x00")}, "a\nb\nc\ufffd", "# x"},
		{"number result", memory.Observation{ToolName: "x", Result: json.RawMessage("42")}, "42", "# x"},
		{"500 runes", memory.Observation{ToolName: "x", Result: mustJSON(long[:1000])}, long[:1000], "# x"},
		{"501 runes", memory.Observation{ToolName: "x", Result: mustJSON(long)}, long[:1000] + "\n... (truncated)", "# x"},
		{"summary heading", memory.Observation{ToolName: "x", Summary: "  sum\nmary\u2028 "}, "", "# sum mary"},
		{"blank summary", memory.Observation{ToolName: "x\ny", Summary: "\n\t"}, "", "# x y"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := readRendered(t, Markdown(&tc.obs))
			checkBody(t, r, false)
			if r.outside[1] != tc.head {
				t.Errorf("heading = %q, want %q", r.outside[1], tc.head)
			}
			if got := r.blocks[len(r.blocks)-1].content; got != tc.result {
				t.Errorf("result block = %q, want %q", got, tc.result)
			}
			if r.blocks[0].content != "{}" {
				t.Errorf("empty arguments = %q, want {}", r.blocks[0].content)
			}
		})
	}
}

func TestArgumentsIndent(t *testing.T) {
	tests := []struct{ raw, want string }{
		{``, `{}`},
		{`null`, `{}`},
		{` {} `, `{}`},
		{"{\"a\":1,\r\n\"b\":[true,null]}  \r\n", "{\n  \"a\": 1,\n  \"b\": [\n    true,\n    null\n  ]\n}"},
		{"not\r\njson\r\n", "not\njson"},
	}
	for _, tc := range tests {
		if got := argumentsJSON(json.RawMessage(tc.raw)); got != tc.want {
			t.Errorf("argumentsJSON(%q) = %q, want %q", tc.raw, got, tc.want)
		}
	}
}

func TestCodeSpan(t *testing.T) {
	for _, s := range []string{"Bash", "`", "``", "a`b", "`a", "a`", " a ", " a", "   ", "x``y```z"} {
		if got := decodeCodeSpan(t, codeSpan(s)); got != s {
			t.Errorf("codeSpan(%q) = %q reads back as %q", s, codeSpan(s), got)
		}
	}
}

func FuzzMarkdown(f *testing.F) {
	for _, s := range nasty {
		f.Add(s, s, s, s)
	}
	f.Add("Bash", "session-1", "```\n````", "")
	f.Fuzz(func(t *testing.T, tool, session, result, errText string) {
		o := memory.Observation{
			ID: "01JPB2N3V4W5X6Y7Z8A9B0C1D2", SessionID: session, Timestamp: when, ToolName: tool,
			Summary: tool, Arguments: mustJSON(map[string]string{"tool": tool}), Result: mustJSON(result), Error: errText,
		}
		r := readRendered(t, Markdown(&o))
		if r.front["tool_name"] != valid(tool) || r.front["session_id"] != valid(session) {
			t.Fatalf("frontmatter gives back tool_name %q, session_id %q", r.front["tool_name"], r.front["session_id"])
		}
		checkBody(t, r, errText != "")
		if got, want := r.blocks[len(r.blocks)-1].content, preview(blockText(valid(result)), previewRunes); got != want {
			t.Fatalf("result block = %q, want %q", got, want)
		}
		if errText != "" {
			if got, want := r.blocks[1].content, preview(blockText(errText), previewRunes); got != want {
				t.Fatalf("error block = %q, want %q", got, want)
			}
		}
	})
}

// TestSections reads back what Markdown wrote, whatever the texts hold: fences, headings,
// backticks.
func TestSections(t *testing.T) {
	for _, o := range []memory.Observation{
		{ToolName: "Bash", Arguments: mustJSON(map[string]string{"command": "echo '```'"}), Result: mustJSON("a\n### Result\n\n```\nnot the end\n````\n")},
		{ToolName: "Read", Arguments: mustJSON(map[string]string{"path": "a.md"}), Result: mustJSON(strings.Repeat("long ", 300)), Error: "it failed\n```"},
		{ToolName: "x", Arguments: json.RawMessage(`"not an object"`), Result: nil},
	} {
		md := Markdown(&o)
		args, errText, result, ok := Sections(md)
		if !ok || args != argumentsJSON(o.Arguments) || result != preview(blockText(o.ResultText()), previewRunes) ||
			o.Error != "" && errText != preview(blockText(o.Error), previewRunes) || o.Error == "" && errText != "" {
			t.Errorf("Sections of\n%s\n= %q, %q, %q, %v", md, args, errText, result, ok)
		}
	}
	if _, _, _, ok := Sections([]byte("# not an observation\n")); ok {
		t.Error("Sections of another file: ok")
	}
}
