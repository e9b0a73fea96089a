package hint

import "testing"

// TestBlock: recorded text keeps its lines and tabs, and nothing in it can drive a
// terminal: escape sequences, carriage returns and other control characters show as
// escapes.
func TestBlock(t *testing.T) {
	for in, want := range map[string]string{
		"plain\n\tindented\n":            "plain\n\tindented\n",
		"a\r\nb":                         "a\nb",
		"\x1b[2Jcleared":                 `\x1b[2Jcleared`,
		"\x1b]52;c;aGk=\x07clipboard":    `\x1b]52;c;aGk=\aclipboard`,
		"ok\rFAKE":                       `ok\rFAKE`,
		"next line\u0085and\u009b31m":    `next line\u0085and\u009b31m`,
		"日本 ü":                           "日本 ü",
		"admin\u202e }; \u2066x\u2069":   `admin\u202e }; \u2066x\u2069`,
		"one\u2028two":                   `one\u2028two`,
		"make\U000e0069\U000e0067\u200b": `make\U000e0069\U000e0067\u200b`,
		"soft\u00adhy\ufeffphen\u2060":   `soft\u00adhy\ufeffphen\u2060`,
		"👩\u200d💻 क्\u200dष":             "👩\u200d💻 क्\u200dष",
	} {
		if got := Block(in); got != want {
			t.Errorf("Block(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestOneLine: one line, whatever the text holds: no control character, no line
// separator, no bidirectional override.
func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"a\nb\tc":                         "a b c",
		"\x1b]52;c;aGk=\x07clip":          "]52;c;aGk= clip",
		"one\u2028two\u2029three":         "one two three",
		"if admin\u202e { \u2066x\u2069":  "if admin { x",
		"日本  ü ":                          "日本 ü",
		"make\U000e0069\U000e0067\u200bx": "make x",
		"👩\u200d💻":                        "👩\u200d💻",
	} {
		if got := OneLine(in); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
	}
}
