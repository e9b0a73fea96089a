package ui

import "testing"

// Arguments as the journal holds them, HTML-escaped, read as the characters; an
// escaped backslash before "u003c" is text, and stays as it is.
func TestIndentJSONUnescapesHTML(t *testing.T) {
	got := indentJSON([]byte(`{"command":"make lint \u0026\u0026 a \u003c b","text":"\\u003c"}`))
	want := "{\n  \"command\": \"make lint && a < b\",\n  \"text\": \"\\\\u003c\"\n}"
	if got != want {
		t.Errorf("indentJSON = %q, want %q", got, want)
	}
}
