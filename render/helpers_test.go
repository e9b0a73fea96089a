package render

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// rendered is a markdown file read back the way a CommonMark reader and a YAML parser
// see it, so that tests check what readers get rather than how the bytes were made.
type rendered struct {
	front   map[string]any
	outside []string // lines outside fenced blocks; each block shows as "<block>"
	blocks  []block
}

type block struct{ info, content string }

// fenceLine splits a line into the run of backticks that starts it, after at most three
// spaces (CommonMark), and the rest.
func fenceLine(line string) (run int, rest string) {
	trimmed := strings.TrimLeft(line, " ")
	if len(line)-len(trimmed) > 3 {
		return 0, line
	}
	rest = strings.TrimLeft(trimmed, "`")
	return len(trimmed) - len(rest), rest
}

func readRendered(t testing.TB, md []byte) rendered {
	t.Helper()
	s := string(md)
	if strings.Contains(s, "\r") {
		t.Fatalf("rendered file holds \\r:\n%s", s)
	}
	head, body, ok := strings.Cut(strings.TrimPrefix(s, "---\n"), "\n---\n")
	if !ok || !strings.HasPrefix(s, "---\n") {
		t.Fatalf("no frontmatter:\n%s", s)
	}
	var r rendered
	if err := yaml.Unmarshal([]byte(head), &r.front); err != nil {
		t.Fatalf("frontmatter does not parse: %v\n%s", err, head)
	}
	lines := strings.Split(body, "\n")
	for i := 0; i < len(lines); i++ {
		n, info := fenceLine(lines[i])
		if n < 3 || strings.Contains(info, "`") { // not a fence opening
			r.outside = append(r.outside, lines[i])
			continue
		}
		start := i + 1
		for i++; i < len(lines); i++ {
			if run, rest := fenceLine(lines[i]); run >= n && strings.Trim(rest, " \t") == "" {
				break
			}
		}
		if i == len(lines) {
			t.Fatalf("fence of %d backticks never closes:\n%s", n, s)
		}
		r.blocks = append(r.blocks, block{strings.TrimSpace(info), strings.Join(lines[start:i], "\n")})
		r.outside = append(r.outside, "<block>")
	}
	return r
}

// skeleton is the body outside fenced blocks, with the heading and the tool line left
// to the caller to check.
func skeleton(failed bool) []string {
	s := []string{"", "#", "", "## Tool Call", "", "**Tool:**", "**Time:**", "", "### Arguments", "", "<block>", ""}
	if failed {
		s = append(s, "### Error", "", "<block>", "")
	}
	return append(s, "### Result", "", "<block>", "")
}

// checkBody checks the body's shape: the fixed lines where they belong, one heading, and
// exactly the blocks expected.
func checkBody(t testing.TB, r rendered, failed bool) {
	t.Helper()
	want := skeleton(failed)
	if len(r.outside) != len(want) {
		t.Fatalf("body lines outside blocks:\n%q\nwant shape\n%q", r.outside, want)
	}
	for i, w := range want {
		got := r.outside[i]
		switch w {
		case "#", "**Tool:**", "**Time:**":
			if !strings.HasPrefix(got, w+" ") && got != w+" " {
				t.Fatalf("line %d = %q, want it to start with %q", i, got, w+" ")
			}
		default:
			if got != w {
				t.Fatalf("line %d = %q, want %q", i, got, w)
			}
		}
	}
}

// decodeCodeSpan reads an inline code span as CommonMark does, and fails if a backtick
// run inside could have closed it early.
func decodeCodeSpan(t testing.TB, span string) string {
	t.Helper()
	n := len(span) - len(strings.TrimLeft(span, "`"))
	if n == 0 || len(span) < 2*n || span[len(span)-n:] != strings.Repeat("`", n) {
		t.Fatalf("not a code span: %q", span)
	}
	inner := span[n : len(span)-n]
	if longestRun(inner, '`') >= n || strings.HasSuffix(inner, "`") {
		t.Fatalf("code span %q can close early", span)
	}
	if len(inner) >= 2 && inner[0] == ' ' && inner[len(inner)-1] == ' ' && strings.Trim(inner, " ") != "" {
		inner = inner[1 : len(inner)-1]
	}
	return inner
}
