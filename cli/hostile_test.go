package cli_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// hostileNames are tool names and session ids meant to escape the repo, break the
// frontmatter, close a fence or forge a trailer.
var hostileNames = []string{
	"../../../../tmp/escape", "/etc/passwd", `..\..\windows\system32`, "..", ".", "a/../../b",
	"nul\x00byte", "esc\x1b[31mred", "line\nAgmem-Session: forged", "cr\rlf", "tab\there",
	strings.Repeat("x", 10000), "CON", "aux", "com1.txt", "a:b", "what?*<>|", "\u202eevil\u202c",
	"bidi \u2066iso\u2069", "---", "```", "~~~\n```\n---", "key: value", "Agmem-Batch: 01H",
	"\ufeffbom", "émoji 🦫", "\xff\xfe bad utf-8", " ", "trailing. ",
}

// TestHostileInputs feeds record every hostile name as a tool name and as a session id,
// and broken shapes besides. Each is refused with one line (and a hint) or captured;
// after a flush, nothing is outside the repo, every frontmatter parses back to what was
// recorded, every commit's trailers are exactly agmem's, and git finds the repo whole.
func TestHostileInputs(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "repo")
	mustAgmem(t, root, "", "init", dir)
	result := strings.Repeat("r", 60)
	var inputs []string
	for _, name := range hostileNames {
		tool, _ := json.Marshal(map[string]any{"tool_name": name, "session_id": "hostile", "arguments": map[string]any{"a": name}, "result": result})
		session, _ := json.Marshal(map[string]any{"tool_name": "Read", "session_id": name, "arguments": map[string]any{"file_path": name}, "result": result})
		hook, _ := json.Marshal(map[string]any{"hook_event_name": "PostToolUse", "session_id": "hostile", "tool_name": name,
			"tool_input": map[string]any{name: name}, "tool_response": name + result, "tool_use_id": name})
		inputs = append(inputs, string(tool), string(session), string(hook))
	}
	deep := strings.Repeat(`{"a":`, 200) + "1" + strings.Repeat("}", 200)
	inputs = append(inputs,
		`{"tool_name":"x","arguments":`+deep+`,"result":"`+result+`"}`,
		`{"tool_name":"x","arguments":`+strings.Repeat("[", 20000)+strings.Repeat("]", 20000)+`}`,
		"\ufeff"+`{"tool_name":"bom","session_id":"hostile","result":"`+result+`"}`,
		`{"tool_name":"x","result":"`+result+"\xff\xfe"+`"}`,
		`{"tool_name":"x"`, `[]`, `"just a string"`, `{"tool_name":7}`, `{"tool_name":""}`,
		`{"tool_name":"x","timestamp":"not a time"}`, `{"hook_event_name":"PostToolUse"}`,
		`{"tool_name":"x","arguments":{"a":1},"arguments":{"b":2},"result":"`+result+`"}`,
	)
	refused := 0
	for _, in := range inputs {
		out, err := agmem(t, dir, nil, in, "record")
		if err != nil {
			refused++
			msg := err.Error()[strings.Index(err.Error(), ": ")+2:]
			msg = msg[strings.Index(msg, ": ")+2:] // the exit status, then agmem's stderr
			checkOneLineError(t, in, msg)
			continue
		}
		if len(lines(out)) > 1 {
			t.Errorf("record of one object printed %d ids", len(lines(out)))
		}
	}
	t.Logf("%d inputs: %d refused with one line, %d captured", len(inputs), refused, len(inputs)-refused)
	mustAgmem(t, dir, "", "flush")
	checkRepoSettled(t, dir)

	// Nothing outside the repo: the temporary root holds the repo alone.
	entries, _ := os.ReadDir(root)
	if len(entries) != 1 {
		t.Errorf("files appeared beside the repo: %v", entries)
	}
	for _, f := range strings.Split(strings.TrimSpace(git(t, dir, "ls-files", "-z")), "\x00") {
		if f == "" {
			continue
		}
		clean := filepath.Clean(f)
		if strings.HasPrefix(clean, "..") || filepath.IsAbs(clean) || slices.Contains(strings.Split(f, "/"), "..") {
			t.Errorf("committed path %q leaves the repo", f)
		}
	}
	checkFrontmatters(t, dir)
	checkTrailerKeys(t, dir)

	// A byte-order mark is accepted, invalid UTF-8 repaired.
	out := mustAgmem(t, dir, "\ufeff"+`{"tool_name":"bom","session_id":"utf8","result":"`+result+"\xff\xfe"+`"}`, "record")
	if len(lines(out)) != 1 {
		t.Fatalf("a payload after a byte-order mark was not recorded: %q", out)
	}
	replay := mustAgmem(t, dir, "", "replay", "--session", "utf8", "--json")
	if !utf8.ValidString(replay) || !strings.Contains(replay, result+"\ufffd\ufffd") {
		t.Errorf("invalid UTF-8 is not repaired: %q", replay)
	}
}

// TestInputOverHardCapIsRefused sends record more than capture.max_input_bytes (64 MiB
// by default): exit 1 with one line and a hint, and nothing recorded.
func TestInputOverHardCapIsRefused(t *testing.T) {
	dir := t.TempDir()
	mustAgmem(t, dir, "", "init")
	huge := `{"tool_name":"x","result":"` + strings.Repeat("a", 64<<20) + `"}`
	out, err := agmem(t, dir, nil, huge, "record")
	if err == nil || out != "" {
		t.Fatalf("record of %d bytes: %q, %v; want a refusal", len(huge), out, err)
	}
	if !strings.Contains(err.Error(), "agmem: input is larger than 64 MiB; nothing was recorded") {
		t.Errorf("refusal says %v", err)
	}
	var status struct {
		Pending int `json:"pending_observations"`
	}
	json.Unmarshal([]byte(mustAgmem(t, dir, "", "status", "--json")), &status)
	if status.Pending != 0 {
		t.Errorf("%d observations recorded from refused input", status.Pending)
	}
}

func checkOneLineError(t *testing.T, input, stderr string) {
	t.Helper()
	ls := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	if len(ls) == 0 || len(ls) > 2 || !strings.HasPrefix(ls[0], "agmem: ") || (len(ls) == 2 && !strings.HasPrefix(ls[1], "agmem: hint: ")) {
		t.Errorf("input %.80q: stderr is not one line and a hint:\n%s", input, stderr)
	}
}

// checkFrontmatters parses every rendered file's frontmatter as YAML and checks it
// holds what agmem writes, with the tool name and session id as strings.
func checkFrontmatters(t *testing.T, dir string) {
	t.Helper()
	n := 0
	filepath.WalkDir(filepath.Join(dir, "current"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		data, _ := os.ReadFile(path)
		head, _, ok := strings.Cut(strings.TrimPrefix(string(data), "---\n"), "\n---\n")
		var front map[string]any
		if !ok || yaml.Unmarshal([]byte(head), &front) != nil {
			t.Errorf("%s: frontmatter does not parse:\n%s", path, head)
			return nil
		}
		for _, k := range []string{"tool_name", "session_id", "observation_id"} {
			if _, ok := front[k].(string); !ok {
				t.Errorf("%s: %s is %#v, not a string", path, k, front[k])
			}
		}
		if front["auto_captured"] != true {
			t.Errorf("%s: auto_captured is %#v", path, front["auto_captured"])
		}
		return nil
	})
	if n == 0 {
		t.Error("no rendered files")
	}
}

// checkTrailerKeys checks that every commit agmem wrote has exactly agmem's trailers,
// once each, as git reads them.
func checkTrailerKeys(t *testing.T, dir string) {
	t.Helper()
	allowed := []string{"Agmem-Session", "Agmem-Observations", "Agmem-Events", "Agmem-Batch", "Agmem-Source",
		"Agmem-Redactions", "Agmem-Message-Model", "Agmem-Auto-Commit"}
	for _, block := range strings.Split(git(t, dir, "log", "--format=%(trailers:only,unfold)%x00"), "\x00") {
		block = strings.TrimSpace(block)
		if block == "" {
			continue // the commit of .gitignore
		}
		seen := map[string]bool{}
		for _, line := range strings.Split(block, "\n") {
			k, _, _ := strings.Cut(line, ": ")
			if !slices.Contains(allowed, k) || seen[k] {
				t.Errorf("trailer %q is not agmem's, or twice, in:\n%s", line, block)
			}
			seen[k] = true
		}
		if !seen["Agmem-Session"] || !seen["Agmem-Batch"] {
			t.Errorf("trailers lack the session or the batch:\n%s", block)
		}
	}
}
