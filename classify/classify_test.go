package classify

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/agmem/agmem/memory"
)

// pythonMap is MEMORY_TYPE_MAP copied from the Python agmem 0.3.0, kept apart from the
// package's own table so that the test checks the package against the original.
var pythonMap = []struct {
	typ      memory.Type
	patterns []string
}{
	{memory.Episodic, []string{"run_command", "execute", "shell", "terminal", "write_file",
		"create_file", "delete_file", "move_file", "copy_file", "mkdir", "git_", "deploy",
		"build", "test", "lint"}},
	{memory.Semantic, []string{"search", "read_file", "read_url", "fetch", "get_", "list_",
		"query", "lookup", "find", "browse", "api_call", "database", "memory_read",
		"memory_search"}},
	{memory.Procedural, []string{"generate", "refactor", "implement", "create_", "setup",
		"configure", "install", "workflow", "pipeline", "template"}},
}

// pythonClassify is the Python agmem's classify_memory_type, which also says which
// pattern decided ("" for the default).
func pythonClassify(toolName string) (memory.Type, string) {
	lower := strings.ToLower(toolName)
	for _, g := range pythonMap {
		for _, p := range g.patterns {
			if strings.Contains(lower, p) {
				return g.typ, p
			}
		}
	}
	return memory.Episodic, ""
}

// pythonCases are names the Python rules were written for. On each, Classify must give
// the type the Python code gives, decided by the same pattern.
var pythonCases = []string{
	"run_command", "execute_sql", "shell_exec", "terminal_session", "write_file",
	"create_file", "delete_file", "move_file", "copy_file", "mkdir", "git_commit",
	"deploy_app", "pipeline_deploy", "npm_build", "run_tests", "lint_code",

	"search_files", "read_file", "read_url", "fetch_url", "get_weather", "list_files",
	"query_db", "database_query", "lookup_user", "find_files", "browse_web", "api_call",
	"database_schema", "memory_read",
	// memory_search can never decide in Python: "search", tried earlier, is inside it.
	"memory_search",

	"generate_code", "refactor_code", "implement_feature", "create_workflow",
	"setup_project", "configure_db", "install_deps", "workflow_run", "pipeline_run",
	"template_render",

	"unknown_tool",
}

func TestClassifyAgreesWithPython(t *testing.T) {
	for _, name := range pythonCases {
		wantType, wantPattern := pythonClassify(name)
		wantRule := "default"
		if wantPattern != "" {
			wantRule = "pattern:" + wantPattern
		}
		gotType, gotRule := Classify(name)
		if gotType != wantType || gotRule != wantRule {
			t.Errorf("Classify(%q) = %s, %s; Python gives %s, %s", name, gotType, gotRule, wantType, wantRule)
		}
	}
}

func TestPythonCasesCoverEveryPattern(t *testing.T) {
	for _, g := range pythonMap {
		for _, p := range g.patterns {
			covered := false
			for _, name := range pythonCases {
				covered = covered || strings.Contains(name, p)
			}
			if !covered {
				t.Errorf("no Python case holds pattern %q", p)
			}
		}
	}
}

func TestClassifyFixesMisfires(t *testing.T) {
	tests := []struct {
		name     string
		want     memory.Type
		wantRule string
		misfire  string // the Python pattern that matched it as a substring
	}{
		{"latest_news", memory.Semantic, "extra:news", "pattern:test"},
		{"budget_report", memory.Episodic, "default", "pattern:get_"},
		{"digit_ocr", memory.Semantic, "extra:ocr", "pattern:git_"},
		{"greatest_hits", memory.Episodic, "default", "pattern:test"},
		{"widget_info", memory.Episodic, "default", "pattern:get_"},
		{"recreate_index", memory.Episodic, "default", "pattern:create_"},
	}
	for _, tt := range tests {
		if _, py := pythonClassify(tt.name); "pattern:"+py != tt.misfire {
			t.Fatalf("%q: Python matches %q, not the misfire %s this row is about", tt.name, py, tt.misfire)
		}
		got, rule := Classify(tt.name)
		if got != tt.want || rule != tt.wantRule {
			t.Errorf("Classify(%q) = %s, %s; want %s, %s", tt.name, got, rule, tt.want, tt.wantRule)
		}
		if rule == tt.misfire {
			t.Errorf("Classify(%q) still decided by %s", tt.name, rule)
		}
	}
}

func TestClassifyWords(t *testing.T) {
	tests := []struct {
		name     string
		want     memory.Type
		wantRule string
	}{
		// camelCase and other separators split into words, which Python's substrings missed.
		{"getWeather", memory.Semantic, "pattern:get_"},
		{"readFile", memory.Semantic, "pattern:read_file"},
		{"HTTPServerBuild", memory.Episodic, "pattern:build"},
		{"run-tests", memory.Episodic, "pattern:test"},
		{"RUN_COMMAND", memory.Episodic, "pattern:run_command"},
		// The last word of a pattern may begin a longer word; earlier words must be whole.
		{"run_testing", memory.Episodic, "pattern:test"},
		{"image_builder", memory.Episodic, "pattern:build"},
		{"read_files", memory.Semantic, "pattern:read_file"},
		{"reread_file", memory.Episodic, "default"},
		// A pattern ending in "_" is one whole word.
		{"getter_setup", memory.Procedural, "pattern:setup"},
		{"list_issues", memory.Semantic, "pattern:list_"},
		{"listing", memory.Episodic, "default"},
		// agmem's own rules, after every Python one.
		{"read_email", memory.Semantic, "extra:read"},
		{"image_viewer", memory.Semantic, "extra:view"},
		{"web_scraper", memory.Semantic, "extra:scrape"},
		{"", memory.Episodic, "default"},
	}
	for _, tt := range tests {
		got, rule := Classify(tt.name)
		if got != tt.want || rule != tt.wantRule {
			t.Errorf("Classify(%q) = %s, %s; want %s, %s", tt.name, got, rule, tt.want, tt.wantRule)
		}
	}
}

func TestClassifyAgentNames(t *testing.T) {
	tests := []struct {
		name     string
		want     memory.Type
		wantRule string
	}{
		{"Read", memory.Semantic, "exact:Read"},
		{"read", memory.Semantic, "exact:Read"},
		{"Grep", memory.Semantic, "exact:Grep"},
		{"Glob", memory.Semantic, "exact:Glob"},
		{"WebFetch", memory.Semantic, "exact:WebFetch"},
		{"WebSearch", memory.Semantic, "exact:WebSearch"},
		{"LS", memory.Semantic, "exact:LS"},
		{"Bash", memory.Episodic, "exact:Bash"},
		{"Edit", memory.Episodic, "exact:Edit"},
		{"MultiEdit", memory.Episodic, "exact:MultiEdit"},
		{"Write", memory.Episodic, "exact:Write"},
		{"NotebookEdit", memory.Episodic, "exact:NotebookEdit"},
		{"TodoWrite", memory.Procedural, "exact:TodoWrite"},
		{"Task", memory.Procedural, "exact:Task"},

		// Claude Code 2.1.332's tools
		{"Agent", memory.Procedural, "exact:Agent"},
		{"TaskCreate", memory.Procedural, "exact:TaskCreate"},
		{"TaskUpdate", memory.Procedural, "exact:TaskUpdate"},
		{"TaskList", memory.Procedural, "exact:TaskList"},
		{"TaskGet", memory.Procedural, "exact:TaskGet"},
		{"ToolSearch", memory.Semantic, "exact:ToolSearch"},
		{"Skill", memory.Procedural, "exact:Skill"},
		// Gemini CLI 0.61.0's
		{"list_directory", memory.Semantic, "pattern:list_"},
		{"read_file", memory.Semantic, "pattern:read_file"},
		{"grep_search", memory.Semantic, "pattern:search"},
		{"glob", memory.Semantic, "exact:Glob"},
		{"replace", memory.Episodic, "exact:replace"},
		{"write_file", memory.Episodic, "pattern:write_file"},
		{"run_shell_command", memory.Episodic, "pattern:shell"},
		{"web_fetch", memory.Semantic, "pattern:fetch"},
		{"google_web_search", memory.Semantic, "pattern:search"},
		{"invoke_agent", memory.Procedural, "exact:invoke_agent"},
		// Codex CLI 0.171.0's, as its hooks name them
		{"apply_patch", memory.Episodic, "exact:apply_patch"},

		{"mcp__fetch__fetch", memory.Semantic, "pattern:fetch"},
		{"mcp__github__create_issue", memory.Procedural, "pattern:create_"},
		{"mcp__x__run_tests", memory.Episodic, "pattern:test"},
		{"mcp__filesystem__read_file", memory.Semantic, "pattern:read_file"},
		{"mcp__my_server__Read", memory.Semantic, "exact:Read"},
		// The server's name never decides: "git" is not a word of create_issue.
		{"mcp__git_hub__create_issue", memory.Procedural, "pattern:create_"},
		{"MCP__search__Task", memory.Procedural, "exact:Task"},
		// Two parts is not an MCP name; the whole name is classified.
		{"mcp__shell", memory.Episodic, "pattern:shell"},
		{"mcp__x__", memory.Episodic, "default"},
	}
	for _, tt := range tests {
		got, rule := Classify(tt.name)
		if got != tt.want || rule != tt.wantRule {
			t.Errorf("Classify(%q) = %s, %s; want %s, %s", tt.name, got, rule, tt.want, tt.wantRule)
		}
	}
}

func TestTokenize(t *testing.T) {
	tests := []struct {
		name string
		want string
	}{
		{"getWeather", "get weather"},
		{"HTTPServer", "http server"},
		{"run_tests", "run tests"},
		{"getV2Data", "get v2 data"},
		{"s3.get-object", "s3 get object"},
		{"__ALL_CAPS__", "all caps"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := strings.Join(tokenize(tt.name), " "); got != tt.want {
			t.Errorf("tokenize(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

func TestCapture(t *testing.T) {
	long := jsonString(strings.Repeat("x", 60))
	tests := []struct {
		desc   string
		tool   string
		result json.RawMessage
		failed bool
		want   bool
		reason string
	}{
		{"ignored", "echo", long, false, false, `tool "echo" is ignored`},
		{"ignored in any case", "PWD", long, false, false, `tool "PWD" is ignored`},
		{"ignored even when failed", "Ping", jsonString("timeout"), true, false, `tool "Ping" is ignored`},
		{"kept", "Bash", long, false, true, ""},

		{"49 runes", "Bash", jsonString(strings.Repeat("é", 49)), false, false, "result is 49 characters, under 50"},
		{"50 runes, 100 bytes", "Bash", jsonString(strings.Repeat("é", 50)), false, true, ""},
		{"escapes count once unquoted", "Bash", json.RawMessage(`"` + strings.Repeat(`\u00e9`, 49) + `"`), false, false, "result is 49 characters, under 50"},
		{"short", "Bash", jsonString("ok"), false, false, "result is 2 characters, under 50"},

		// {"k":"…"} is 8 characters around the value once compact.
		{"object measured compact: 49", "Bash", json.RawMessage(`{ "k" :  "` + strings.Repeat("x", 41) + `" }`), false, false, "result is 49 characters, under 50"},
		{"object measured compact: 50", "Bash", json.RawMessage(`{ "k" :  "` + strings.Repeat("x", 42) + `" }`), false, true, ""},
		{"number", "Bash", json.RawMessage(`12345`), false, false, "result is 5 characters, under 50"},
		{"empty object", "Bash", json.RawMessage(`{}`), false, false, "result is 2 characters, under 50"},

		{"absent", "Bash", nil, false, true, ""},
		{"empty", "Bash", json.RawMessage(``), false, true, ""},
		{"empty string", "Bash", json.RawMessage(`""`), false, true, ""},
		{"null", "Bash", json.RawMessage(`null`), false, true, ""},
		{"whitespace", "Bash", json.RawMessage(" \n"), false, true, ""},

		{"failed with a short error", "Bash", jsonString("exit 1"), true, true, ""},
	}
	for _, tt := range tests {
		got, reason := Default().Capture(tt.tool, tt.result, tt.failed)
		if got != tt.want || reason != tt.reason {
			t.Errorf("%s: Capture(%q, %s, %v) = %v, %q; want %v, %q", tt.desc, tt.tool, tt.result, tt.failed, got, reason, tt.want, tt.reason)
		}
	}
}

func TestCaptureCustomRules(t *testing.T) {
	r := Rules{IgnoreTools: []string{"Read"}, MinResultChars: 0}
	if ok, _ := r.Capture("echo", jsonString("hi"), false); !ok {
		t.Error("echo is ignored only by the default rules")
	}
	if ok, _ := r.Capture("READ", nil, false); ok {
		t.Error("READ should be ignored")
	}
}

func TestDefaultIsFresh(t *testing.T) {
	Default().IgnoreTools[0] = "Bash"
	if ok, _ := Default().Capture("Bash", nil, false); !ok {
		t.Error("changing one Default() changed the next")
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		desc string
		tool string
		args string
		want string
	}{
		{"key order",
			"T", `{"command":"ls","pattern":"p","query":"q","url":"u","file_path":"fp","file":"f","path":"/a"}`,
			"T path=/a file=f file_path=fp url=u query=q pattern=p command=ls"},
		{"other keys left out", "Write", `{"content":"x","file_path":"/a.go"}`, "Write file_path=/a.go"},
		{"no keys", "Bash", `{}`, "Bash"},
		{"empty value kept", "Bash", `{"command":""}`, "Bash command="},
		{"non-string values as compact JSON",
			"T", `{"path": 3, "query": {"a": [1, 2]}, "url": null, "file": true}`,
			`T path=3 file=true url=null query={"a":[1,2]}`},
		{"value cut to 100 runes",
			"T", `{"path":"` + strings.Repeat("é", 150) + `"}`,
			"T path=" + strings.Repeat("é", 100)},
		{"whole cut to 200 runes",
			"T", `{"path":"` + strings.Repeat("a", 100) + `","url":"` + strings.Repeat("ü", 100) + `"}`,
			"T path=" + strings.Repeat("a", 100) + " url=" + strings.Repeat("ü", 200-112)},
		{"a redaction's mark the cut would split is left out",
			"Bash", `{"command":"` + strings.Repeat("a", 90) + ` [REDACTED:github-pat] x"}`,
			"Bash command=" + strings.Repeat("a", 90)},
		{"a whole mark before the cut is kept",
			"Bash", `{"command":"gh auth login --with-token [REDACTED:github-pat] ` + strings.Repeat("b", 60) + `"}`,
			"Bash command=gh auth login --with-token [REDACTED:github-pat] " + strings.Repeat("b", 100-49)},
		{"a bracket that starts no mark is kept",
			"Bash", `{"command":"` + strings.Repeat("a", 95) + ` [abcdef]"}`,
			"Bash command=" + strings.Repeat("a", 95) + " [abc"},
		{"control characters become spaces",
			"Bash\n", `{"command":"ls\n-la\t\u0000x\r\u2028y"}`,
			"Bash  command=ls -la  x  y"},
		{"absent args", "Bash", ``, "Bash"},
		{"null args", "Bash", `null`, "Bash"},
		{"array args", "Bash", `["ls"]`, "Bash"},
		{"string args", "Bash", `"ls"`, "Bash"},
		{"malformed args", "Bash", `{"command":`, "Bash"},
	}
	for _, tt := range tests {
		if got := Summarize(tt.tool, json.RawMessage(tt.args)); got != tt.want {
			t.Errorf("%s: Summarize(%q, %s)\n got %q\nwant %q", tt.desc, tt.tool, tt.args, got, tt.want)
		}
	}
}

func FuzzClassify(f *testing.F) {
	for _, name := range pythonCases {
		f.Add(name, []byte(`{"path":"/a","command":"ls\n"}`))
	}
	f.Add("mcp__github__create_issue", []byte(`{"query":{"a":[1,"\u2028"]}}`))
	f.Add("HTTPServer\x00\xff", []byte(`{"url":"\xff"}`))
	f.Fuzz(func(t *testing.T, name string, args []byte) {
		typ, rule := Classify(name)
		if _, ok := memory.ParseType(string(typ)); !ok || rule == "" {
			t.Fatalf("Classify(%q) = %q, %q", name, typ, rule)
		}
		Default().Capture(name, args, false)
		s := Summarize(name, args)
		if n := utf8.RuneCountInString(s); n > maxSummaryRunes {
			t.Fatalf("Summarize(%q, %q) is %d runes", name, args, n)
		}
		if strings.ContainsFunc(s, unicode.IsControl) {
			t.Fatalf("Summarize(%q, %q) = %q holds a control character", name, args, s)
		}
	})
}

// FuzzSummarizeAsEncodingJSON checks Summarize against the way it read arguments before
// summaryValues: json.Unmarshal into a map of raw values, and of each string value.
func FuzzSummarizeAsEncodingJSON(f *testing.F) {
	for _, s := range []string{
		`{"path":"/a","command":"ls\n"}`, ` {"file\u005fpath" : "a\u00e9\ud800" , "path":1,"path":[1, 2]} `, `null`, `[1]`,
		`{"query":{"a":[1,"\u2028"]},"url":"\xff","pattern":"x",}`, `{"command":"a"} x`, `{"File":"a","file":null}`, `"x"`,
	} {
		f.Add("Read", []byte(s))
	}
	old := func(toolName string, args []byte) string {
		parts := []string{toolName}
		var obj map[string]json.RawMessage
		if json.Unmarshal(args, &obj) == nil {
			for _, k := range summaryKeys {
				if v, ok := obj[k]; ok {
					text := string(v)
					var s string
					var compact bytes.Buffer
					if v = bytes.TrimSpace(v); len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil {
						text = s
					} else if json.Compact(&compact, v) == nil {
						text = compact.String()
					}
					parts = append(parts, k+"="+cut(text, maxValueRunes))
				}
			}
		}
		return OneLine(strings.Join(parts, " "))
	}
	f.Fuzz(func(t *testing.T, name string, args []byte) {
		if got, want := Summarize(name, args), old(name, args); got != want {
			t.Fatalf("Summarize(%q, %q) = %q, encoding/json's way %q", name, args, got, want)
		}
	})
}
