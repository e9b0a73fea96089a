package classify

import (
	"strings"
	"sync"
	"unicode"

	"github.com/agmem/agmem/memory"
)

// exactNames are the tool names real agents use (Claude Code's, and Gemini CLI's,
// Codex's and Cursor's where no pattern fits them): "Read" or "Glob" name no verb the
// Python patterns know, and "write_todos" writes a plan, not a file.
var exactNames = []struct {
	name string
	typ  memory.Type
}{
	{"Read", memory.Semantic},
	{"Grep", memory.Semantic},
	{"Glob", memory.Semantic},
	{"WebFetch", memory.Semantic},
	{"WebSearch", memory.Semantic},
	{"LS", memory.Semantic},
	{"Bash", memory.Episodic},
	{"Edit", memory.Episodic},
	{"MultiEdit", memory.Episodic},
	{"Write", memory.Episodic},
	{"NotebookEdit", memory.Episodic},
	{"TodoWrite", memory.Procedural},
	{"Task", memory.Procedural},
	// Claude Code 2.1: the subagent is Agent, the plan its Task tools; ToolSearch finds
	// tools, Skill loads instructions.
	{"Agent", memory.Procedural},
	{"TaskCreate", memory.Procedural},
	{"TaskUpdate", memory.Procedural},
	{"TaskList", memory.Procedural},
	{"TaskGet", memory.Procedural},
	{"ToolSearch", memory.Semantic},
	{"Skill", memory.Procedural},
	{"write_todos", memory.Procedural},  // Gemini CLI
	{"save_memory", memory.Semantic},    // Gemini CLI
	{"replace", memory.Episodic},        // Gemini CLI's edit
	{"invoke_agent", memory.Procedural}, // Gemini CLI's subagent
	{"update_plan", memory.Procedural},  // Codex
	{"apply_patch", memory.Episodic},    // Codex
	{"todo_write", memory.Procedural},   // Cursor
}

// pythonPatterns is the Python agmem's MEMORY_TYPE_MAP, in its order: the first match wins,
// so episodic is tried before semantic and semantic before procedural.
var pythonPatterns = []struct {
	typ      memory.Type
	patterns []string
}{
	{memory.Episodic, []string{
		"run_command", "execute", "shell", "terminal", "write_file", "create_file",
		"delete_file", "move_file", "copy_file", "mkdir", "git_", "deploy", "build", "test", "lint",
	}},
	{memory.Semantic, []string{
		"search", "read_file", "read_url", "fetch", "get_", "list_", "query", "lookup", "find",
		"browse", "api_call", "database", "memory_read", "memory_search",
	}},
	{memory.Procedural, []string{
		"generate", "refactor", "implement", "create_", "setup", "configure", "install",
		"workflow", "pipeline", "template",
	}},
}

// extraPatterns are agmem's own, tried only when no Python pattern matched. They give a
// home to reading tools the Python rules miss, among them the names its substring
// matching used to misfire on: latest_news (was "test"), digit_ocr (was "git_").
var extraPatterns = []struct {
	typ      memory.Type
	patterns []string
}{
	{memory.Semantic, []string{"read", "view", "news", "ocr", "scrape"}},
}

type pattern struct {
	rule      string // as reported by Classify: "pattern:read_file"
	typ       memory.Type
	tokens    []string
	exactLast bool // a Python pattern ending in "_" names a whole word: "get_" is get, not getter
}

// patterns are compiled when a name is first not one of exactNames: not at all in the
// hook of a Claude Code call, whose tool names all are, and whose process would pay
// for them at start (45 µs a run in a profile of 500 runs, most of it page faults).
var patterns = sync.OnceValue(compile)

func compile() []pattern {
	var ps []pattern
	add := func(prefix string, typ memory.Type, names []string) {
		for _, name := range names {
			ps = append(ps, pattern{
				rule:      prefix + name,
				typ:       typ,
				tokens:    tokenize(name),
				exactLast: strings.HasSuffix(name, "_"),
			})
		}
	}
	for _, g := range pythonPatterns {
		add("pattern:", g.typ, g.patterns)
	}
	for _, g := range extraPatterns {
		add("extra:", g.typ, g.patterns)
	}
	return ps
}

// Classify returns the memory type of a tool and the rule that decided it (for tests and
// --verbose): "exact:Read", "pattern:read_file", "extra:news" or "default".
//
// An mcp__<server>__<tool> name is classified by its <tool> part. Patterns match whole
// words of the name, split at punctuation and camelCase: "test" matches run_tests but not
// latest_news.
func Classify(toolName string) (memory.Type, string) {
	name := toolName
	if len(name) >= 5 && strings.EqualFold(name[:5], "mcp__") {
		if parts := strings.Split(name, "__"); len(parts) >= 3 {
			name = parts[len(parts)-1]
		}
	}
	for _, e := range exactNames {
		if strings.EqualFold(e.name, name) {
			return e.typ, "exact:" + e.name
		}
	}
	words := tokenize(name)
	for _, p := range patterns() {
		if p.matches(words) {
			return p.typ, p.rule
		}
	}
	return memory.Episodic, "default"
}

// matches says whether the pattern's tokens occur as consecutive words. Its last token
// may begin a word (test → tests, build → builder); earlier ones must be whole words.
func (p pattern) matches(words []string) bool {
	last := len(p.tokens) - 1
	for i := 0; i+last < len(words); i++ {
		ok := true
		for j, t := range p.tokens {
			w := words[i+j]
			if j == last && !p.exactLast {
				ok = strings.HasPrefix(w, t)
			} else {
				ok = w == t
			}
			if !ok {
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// tokenize splits a name into lowercase words at every character that is neither a letter
// nor a digit, and at camelCase boundaries: getWeather → get weather, HTTPServer → http server.
func tokenize(name string) []string {
	rs := []rune(name)
	var words []string
	start := -1
	flush := func(end int) {
		if start >= 0 {
			words = append(words, strings.ToLower(string(rs[start:end])))
			start = -1
		}
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			continue
		}
		if start >= 0 && unicode.IsUpper(r) {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush(i)
			}
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(rs))
	return words
}
