package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestStrings(t *testing.T) {
	for _, s := range []string{
		`""`, `"plain"`, `"\u00e9\ud83d\ude00"`, `"\ud800"`, `"\ud800\u0041"`, `"\udc00\ud800"`, `"\ud800\ud800\udc00"`,
		"\"a\xffb\xc3\x28\xe2\x80\"", `"\"\\\/\b\f\n\r\t"`, `"\u2028\u0000"`, `"\uD83D\uDE00\uFFFF"`, `"\ud8000udc00"`,
		`"a longer string, past eight bytes, then \u00e9 and \n, then plain again \ud800"`,
	} {
		var want string
		if err := json.Unmarshal([]byte(s), &want); err != nil {
			t.Fatal(err)
		}
		r := New([]byte(s))
		got, err := r.Unquote()
		if err != nil || got != want || !r.End() {
			t.Errorf("Unquote(%s) = %q, %v; want %q", s, got, err, want)
		}
		r = New([]byte(s))
		if raw, err := r.Skip(0); err != nil || string(raw) != s {
			t.Errorf("Skip(%s) = %q, %v", s, raw, err)
		}
		r = New([]byte(s))
		if raw, escaped, err := r.Quoted(); err != nil || string(raw) != s || escaped != strings.Contains(s, `\`) {
			t.Errorf("Quoted(%s) = %q, %t, %v", s, raw, escaped, err)
		}
	}
	for _, s := range []string{`"`, `"\x"`, `"\u12g4"`, "\"a\tb\"", `"\`, `"\u12"`, `"0123456789abcdef`, "\"0123456789\x00\""} {
		r := New([]byte(s))
		if _, err := r.Unquote(); err == nil {
			t.Errorf("Unquote(%s) accepted", s)
		}
		r = New([]byte(s))
		if _, err := r.Skip(0); err == nil {
			t.Errorf("Skip(%s) accepted", s)
		}
	}
}

// TestMaxDepth checks the bound on nesting against encoding/json's, at the top and
// inside a container the caller opened.
func TestMaxDepth(t *testing.T) {
	for _, open := range []string{"[", `{"a":`} {
		for _, n := range []int{MaxDepth - 1, MaxDepth, MaxDepth + 1} {
			end := "]"
			if open != "[" {
				end = "}"
			}
			value := strings.Repeat(open, n-1) + "[]" + strings.Repeat(end, n-1)
			want := json.Valid([]byte(value))
			r := New([]byte(value))
			if _, err := r.Skip(0); (err == nil) != want {
				t.Errorf("Skip(0) of %s nested %d: %v, encoding/json valid: %t", open, n, err, want)
			}
			member := `{"m":` + value + `}`
			want = json.Valid([]byte(member))
			r = New([]byte(member))
			r.Open('}')
			r.Quoted()
			r.Next(':')
			if _, err := r.Skip(1); (err == nil) != want {
				t.Errorf("Skip(1) of %s nested %d: %v, encoding/json valid: %t", open, n, err, want)
			}
		}
	}
}

// FuzzSkip checks that Skip takes a value exactly when encoding/json does.
func FuzzSkip(f *testing.F) {
	for _, s := range []string{
		`{"observation":{"id":"01A","session_id":"s1","timestamp":"2026-11-30T09:00:01.5Z","tool_name":"Bash","arguments":{"command":"ls -l"},"result":"a\nb\t\"c\"\\ \u00e9 <>&","duration_ms":12}}`,
		` { "event" : { "id" : "01C" , "x" : [ 1 , -2.5e+3 , true , false , null , { } , [ ] ] } } `,
		`[1e5,-0.0E-1,"\ud83d\ude00",{"a":[{}]}]`,
		`{"x":01}`, `{"x":1.}`, `{"x":"a` + "\t" + `b"}`, `{"x":"\x"}`, `{"x":"\u12"}`, `{"x":tru}`, `{"x":[1,]}`,
		`{"id":"01A",}`, `{"id":"01A"}}`, `{"id":"01A"} x`, `{"id":"01A"}` + "\x00", `"` + strings.Repeat("a", 20),
		"\"\xff\xc3\x28\"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := New(b)
		_, err := s.Skip(0)
		ok := err == nil && s.End()
		if valid := json.Valid(b); ok != valid {
			t.Fatalf("Skip takes %q: %t, encoding/json: %t", b, ok, valid)
		}
		var c bytes.Buffer
		compact := json.Compact(&c, b) == nil && bytes.Equal(c.Bytes(), b)
		if got := Compact(b); got != compact {
			t.Fatalf("Compact(%q) = %t; json.Compact leaves it as it is: %t", b, got, compact)
		}
	})
}

func TestMembers(t *testing.T) {
	for _, c := range []struct {
		data string
		want string // names read, then "ok" if Members says so
	}{
		{`{"a":1,"b\u0020c":[1,{"x":2}],"a":"s"}`, "a,b c,a,ok"},
		{` { } `, "ok"},
		{`{"a":1} x`, "a,"},
		{`{"a":1,}`, "a,"},
		{`{"stop":1,"b":2}`, "stop,"},
		{`[{"a":1}]`, ""},
		{`null`, ""},
		{`{"a"1}`, ""},
	} {
		var got []string
		ok := Members([]byte(c.data), func(s *Scanner, name string) bool {
			got = append(got, name)
			_, err := s.Skip(1)
			return err == nil && name != "stop"
		})
		if ok {
			got = append(got, "ok")
		} else if len(got) > 0 {
			got = append(got, "")
		}
		if s := strings.Join(got, ","); s != c.want {
			t.Errorf("Members(%s) read %q, want %q", c.data, s, c.want)
		}
	}
}

// FuzzUnquote checks Unquote against encoding/json on any text between quotes, and
// where closing finds a valid string to end.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`plain`, `a\nb\t\"c\"\\ \u00e9 <>&`, `\ud83d\ude00\ud800`, "a\xffb\xc3\x28\xe2\x80", `\`, `\u12`, "a\tb", `a" x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		quoted := append(append([]byte{'"'}, b...), '"')
		var want string
		wantErr := json.Unmarshal(quoted, &want)
		r := New(quoted)
		got, err := r.Unquote()
		if err == nil && !r.End() {
			err = ErrSyntax // a quote inside: not one string
		}
		if (err != nil) != (wantErr != nil) || err == nil && got != want {
			t.Fatalf("Unquote(%q) = %q, %v; encoding/json: %q, %v", quoted, got, err, want, wantErr)
		}
		if c := closing(quoted, 1); wantErr == nil && c != len(quoted)-1 {
			t.Fatalf("closing(%q) = %d; the string closes at %d", quoted, c, len(quoted)-1)
		}
	})
}

// FuzzAppendHTMLEscape holds AppendHTMLEscape to json.HTMLEscape.
func FuzzAppendHTMLEscape(f *testing.F) {
	for _, s := range []string{``, `"<b> & </b>"`, "\"a\u2028b\u2029c\"", "\xe2\x80", "\xe2\x80\xa8\xe2", "0123456789<abcdef&>"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want bytes.Buffer
		json.HTMLEscape(&want, b)
		if got := AppendHTMLEscape([]byte("x"), b); string(got) != "x"+want.String() {
			t.Fatalf("AppendHTMLEscape(%q) = %q; json.HTMLEscape: %q", b, got[1:], want.String())
		}
	})
}

// FuzzAppendHTMLUnescape checks that AppendHTMLUnescape gives back, from any text
// encoding/json wrote with its HTML escaping, what it writes without it.
func FuzzAppendHTMLUnescape(f *testing.F) {
	for _, s := range []string{"", "<b> & </b>", `\u003c stays`, `\\<`, "a\u2028b", `\`, `<\>`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		escaped, _ := json.Marshal(map[string]string{s: s})
		var plain bytes.Buffer
		enc := json.NewEncoder(&plain)
		enc.SetEscapeHTML(false)
		enc.Encode(map[string]string{s: s})
		want := bytes.TrimSuffix(plain.Bytes(), []byte("\n"))
		if got := AppendHTMLUnescape([]byte("x"), escaped); string(got) != "x"+string(want) {
			t.Fatalf("AppendHTMLUnescape(%s) = %s; want %s", escaped, got[1:], want)
		}
	})
}

// FuzzAppendString holds AppendString to encoding/json, with HTML escaping and without.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", `q"b\s`, "nl\ncr\rtab\tnul\x00esc\x1b\b\f", "<&>", "ls\u2028ps\u2029",
		"émoji 🦫", "bad\xffutf8", "\x7f", "eight by\ttes and more than sixteen, \"quoted\" <b> \u00e9"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, html bool) {
		var enc bytes.Buffer
		e := json.NewEncoder(&enc)
		e.SetEscapeHTML(html)
		e.Encode(s)
		if got, want := string(AppendString([]byte("x"), s, html)), "x"+strings.TrimSuffix(enc.String(), "\n"); got != want {
			t.Fatalf("AppendString(%q, %t) = %s; encoding/json writes %s", s, html, got[1:], want[1:])
		}
	})
}

func TestField(t *testing.T) {
	names := []string{"id", "session_id"}
	for key, want := range map[string]int{"id": 0, "session_id": 1, "ID": FoldedField, "Session_ID": FoldedField,
		"ſession_id": FoldedField, "é": FoldedField, "idx": NotAField, "": NotAField} {
		if got := Field(names, []byte(key)); got != want {
			t.Errorf("Field(%q) = %d, want %d", key, got, want)
		}
	}
}

func TestFields(t *testing.T) {
	keys := []string{"id", "cmd"}
	for text, want := range map[string]string{
		`{"id":"a","other":[1,{"x":2}],"cmd":"b"}`: "id=a cmd=b ",
		` { } `:                              "",
		`{"ID":"a"}`:                         "refused", // encoding/json's field, in another case
		`{"i\u0064":"a"}`:                    "refused", // a name with an escape
		`{"id":"a","id":"b"}`:                "refused", // the last would win
		`{"id":1}`:                           "refused", // member refuses it
		`{"other":[}`:                        "refused",
		`["id"]`:                             "refused",
		`{"other":` + deep(MaxDepth-1) + `}`: "",        // at the bound, the object counted
		`{"other":` + deep(MaxDepth) + `}`:   "refused", // past it
	} {
		s, got := New([]byte(text)), ""
		ok := s.Fields(keys, 0, func(s *Scanner, k int) bool {
			var v string
			ok := s.String(&v)
			got += keys[k] + "=" + v + " "
			return ok
		})
		if !ok {
			got = "refused"
		}
		if got != want {
			t.Errorf("Fields(%.40q) read %q, want %q", text, got, want)
		}
	}
}

// deep is n arrays, one in another.
func deep(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// TestAppendText: each escape in a JSON text's strings is the character it stands for,
// as encoding/json reads it; the rest is kept as it is.
func TestAppendText(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":"x\ny","b":["\u003ch1\u003e \u0026"]}`: "{\"a\":\"x\ny\",\"b\":[\"<h1> &\"]}",
		`"caf\u00e9 \ud83d\ude00 \"q\" \\ \/ \t"`:    "\"café 😀 \"q\" \\ / \t\"",
		`"lone \ud83d half"`:                         "\"lone \uFFFD half\"",
		`{"n":1,"t":true}`:                           `{"n":1,"t":true}`,
		`"bad \x escape\`:                            `"bad \x escape\`,
	} {
		if got := string(AppendText([]byte("<"), []byte(in))); got != "<"+want {
			t.Errorf("AppendText(%s) = %q, want %q", in, got, "<"+want)
		}
	}
	for _, s := range []string{"plain", "two\nlines\tand a tab", "<tag> & \"quotes\" \\ back", "é 😀 \u2028 \x01"} {
		raw, _ := json.Marshal(s)
		if got := string(AppendText(nil, raw)); got != `"`+s+`"` {
			t.Errorf("AppendText(%s) = %q, want %q", raw, got, `"`+s+`"`)
		}
	}
}
