package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agmem/agmem/memory"
)

// previewRunes is how much of a result or an error a file shows, as in the Python agmem.
const previewRunes = 500

// Markdown renders an observation: YAML frontmatter, then the Python agmem's body
// (summary heading, tool, time, arguments as JSON, result preview), with an error section
// before the result when the call failed.
func Markdown(o *memory.Observation) []byte {
	var b strings.Builder
	ts := o.Timestamp.UTC().Format(time.RFC3339Nano)

	b.WriteString("---\n")
	writeField(&b, "schema_version", "1.0")
	writeField(&b, "memory_type", string(o.MemoryType))
	writeField(&b, "observation_id", o.ID)
	writeField(&b, "session_id", o.SessionID)
	writeField(&b, "timestamp", ts)
	writeField(&b, "tool_name", o.ToolName)
	b.WriteString("auto_captured: true\n")
	for _, f := range []struct{ key, value string }{
		{"source", o.Source}, {"tool_use_id", o.ToolUseID}, {"cwd", o.Cwd}, {"agent_id", o.AgentID},
		{"prompt_id", o.PromptID},
	} {
		if f.value != "" {
			writeField(&b, f.key, f.value)
		}
	}
	if o.DurationMS != nil {
		b.WriteString("duration_ms: " + strconv.FormatInt(*o.DurationMS, 10) + "\n")
	}
	if o.Error != "" {
		b.WriteString("failed: true\n")
	}
	if o.Interrupted {
		b.WriteString("interrupted: true\n")
	}
	b.WriteString("redactions: " + strconv.Itoa(o.Redactions) + "\n")
	if o.Withheld != "" {
		writeField(&b, "withheld", o.Withheld)
	}
	if len(o.Truncated) > 0 {
		b.WriteString("truncated:\n")
		for _, where := range slices.Sorted(maps.Keys(o.Truncated)) {
			b.WriteString("  " + yamlQuote(where) + ": " + strconv.Itoa(o.Truncated[where]) + "\n")
		}
	}
	b.WriteString("---\n\n")

	b.WriteString("# " + title(o) + "\n\n")
	b.WriteString("## Tool Call\n\n")
	b.WriteString("**Tool:** " + codeSpan(oneLine(o.ToolName)) + "\n")
	b.WriteString("**Time:** " + ts + "\n\n")
	b.WriteString("### Arguments\n\n")
	writeFence(&b, "json", argumentsJSON(o.Arguments))
	if o.Error != "" {
		b.WriteString("\n### Error\n\n")
		writeFence(&b, "", preview(blockText(o.Error), previewRunes))
	}
	b.WriteString("\n### Result\n\n")
	writeFence(&b, "", preview(blockText(o.ResultText()), previewRunes))
	return []byte(b.String())
}

// title names an observation in a heading or a message line: its summary, or failing
// that its tool name, on one line.
func title(o *memory.Observation) string {
	if t := strings.TrimSpace(oneLine(o.Summary)); t != "" {
		return t
	}
	return strings.TrimSpace(oneLine(o.ToolName))
}

// argumentsJSON is the arguments indented as the Python agmem's json.dumps(indent=2).
func argumentsJSON(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "{}"
	}
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return blockText(string(raw)) // not JSON after all: still show what there is
	}
	return blockText(b.String())
}

// writeFence writes content as a fenced code block whose fence is longer than any run of
// backticks in the content (CommonMark), so that no line of the content can close it.
func writeFence(b *strings.Builder, info, content string) {
	fence := strings.Repeat("`", max(3, longestRun(content, '`')+1))
	b.WriteString(fence + info + "\n" + content + "\n" + fence + "\n")
}

// codeSpan writes s as an inline code span that no backtick inside can close. CommonMark
// strips one space from each end when both ends hold one, so padding is added where
// s itself starts or ends with a backtick or a space, and stripped again by the reader.
func codeSpan(s string) string {
	if s == "" {
		return ""
	}
	ticks := strings.Repeat("`", longestRun(s, '`')+1)
	first, last := s[0], s[len(s)-1]
	if strings.Trim(s, " ") != "" && (first == '`' || first == ' ' || last == '`' || last == ' ') {
		s = " " + s + " "
	}
	return ticks + s + ticks
}

func writeField(b *strings.Builder, key, value string) {
	b.WriteString(key + ": " + yamlQuote(value) + "\n")
}

// yamlQuote writes s as a YAML double-quoted scalar that any YAML 1.1 or 1.2 parser reads
// back as s: every character YAML does not call printable is escaped (C0, DEL, C1,
// U+FFFE, U+FFFF), and so are the line and paragraph separators and the BOM that some
// readers treat specially. Invalid UTF-8 becomes U+FFFD, one per bad byte.
func yamlQuote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '\\' || r == '"':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || 0x7F <= r && r <= 0x9F:
			fmt.Fprintf(&b, `\x%02X`, r)
		case r == '\u2028' || r == '\u2029' || r == '\uFEFF' || r == '\uFFFE' || r == '\uFFFF':
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Sections are the texts an observation's markdown (Markdown) shows of it: its
// arguments as JSON, and the start of its error ("" for none) and of its result; ok is
// false for a file not in that shape. Each block is read to the fence that closes it,
// which nothing inside it can be.
func Sections(md []byte) (arguments, errText, result string, ok bool) {
	rest := string(md)
	block := func(heading string) (string, bool) {
		after, found := strings.CutPrefix(rest, heading+"\n\n")
		if !found {
			return "", false
		}
		line, after, found := strings.Cut(after, "\n")
		fence := strings.TrimSuffix(line, "json")
		if !found || len(fence) < 3 || strings.Trim(fence, "`") != "" {
			return "", false
		}
		content, after, found := strings.Cut(after, "\n"+fence+"\n")
		if !found {
			return "", false
		}
		rest = after
		return content, true
	}
	i := strings.Index(rest, "\n### Arguments\n\n")
	if i < 0 {
		return "", "", "", false
	}
	rest = rest[i+1:]
	if arguments, ok = block("### Arguments"); !ok {
		return "", "", "", false
	}
	rest = strings.TrimPrefix(rest, "\n")
	if strings.HasPrefix(rest, "### Error\n") {
		if errText, ok = block("### Error"); !ok {
			return "", "", "", false
		}
		rest = strings.TrimPrefix(rest, "\n")
	}
	result, ok = block("### Result")
	return arguments, errText, result, ok
}
