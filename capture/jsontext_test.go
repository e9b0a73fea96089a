package capture

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// FuzzReadNative checks the one-pass reader against encoding/json: a line readNative
// accepts is a line json.Unmarshal accepts and decodes to the same Native, and the file
// pathOf finds in its arguments is the one json.Unmarshal into a map finds.
func FuzzReadNative(f *testing.F) {
	for _, s := range nativeSample {
		f.Add([]byte(s.line))
	}
	for _, s := range []string{
		`{"Tool_Name":"Read","ARGUMENTS":{"path":"a","path":null,"file":"b"},"result":"x\u00e9\ud83d\ude00\ud800\"\\\/\b\f\n\r\t"}`,
		`{"tool\u005fname":"x","tool_name":null,"id":"a","id":null,"duration_ms":-1.5e3,"result":[1,{"a":[]},true,false,null]}`,
		`{"tool_name":"x","duration_ms":1e400}`,
		`{"tool_name":"x","arguments":{"file_path":5,"filePath":"\u0000x"},"result":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`,
		"{\"tool_name\":\"x\xff\",\"\xc3\x28\":1,\"result\":\"a\xe2\x80\"} ",
		`{"tool_name":"x","k":01}`,
		`{"tool_name":"x","hook_event_name":null}`,
		`{"tool_name":"x","ſession_id":"s"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if n, ok := readNative(data); ok {
			var want Native
			if err := json.Unmarshal(data, &want); err != nil {
				t.Fatalf("readNative accepts %q, json.Unmarshal refuses it: %v", data, err)
			}
			if !reflect.DeepEqual(n, want) {
				t.Fatalf("readNative(%q)\n = %+v\nwant %+v", data, n, want)
			}
			if got, want := pathOf(n.Arguments), pathOfJSON(n.Arguments); got != want {
				t.Fatalf("pathOf(%q) = %q, want %q", n.Arguments, got, want)
			}
		}
		if got, want := pathOf(data), pathOfJSON(data); got != want {
			t.Fatalf("pathOf(%q) = %q, want %q", data, got, want)
		}
	})
}

// pathOfJSON is pathOf by way of encoding/json.
func pathOfJSON(args []byte) string {
	var members map[string]json.RawMessage
	if json.Unmarshal(args, &members) != nil {
		return ""
	}
	for _, k := range pathKeys {
		var s string
		if json.Unmarshal(members[k], &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

func TestReaderStrings(t *testing.T) {
	for _, s := range []string{
		`""`, `"plain"`, `"\u00e9\ud83d\ude00"`, `"\ud800"`, `"\ud800\u0041"`, `"\udc00\ud800"`, `"\ud800\ud800\udc00"`,
		"\"a\xffb\xc3\x28\xe2\x80\"", `"\"\\\/\b\f\n\r\t"`, `"\u2028\u0000"`,
	} {
		var want string
		if err := json.Unmarshal([]byte(s), &want); err != nil {
			t.Fatal(err)
		}
		r := reader{data: []byte(s)}
		got, err := r.str()
		if err != nil || got != want || !r.end() {
			t.Errorf("str(%s) = %q, %v; want %q", s, got, err, want)
		}
		r = reader{data: []byte(s)}
		if raw, err := r.skip(); err != nil || string(raw) != s {
			t.Errorf("skip(%s) = %q, %v", s, raw, err)
		}
	}
	for _, s := range []string{`"`, `"\x"`, `"\u12g4"`, "\"a\tb\"", `"\`, `"\u12"`} {
		r := reader{data: []byte(s)}
		if _, err := r.str(); err == nil {
			t.Errorf("str(%s) accepted", s)
		}
		r = reader{data: []byte(s)}
		if _, err := r.skip(); err == nil {
			t.Errorf("skip(%s) accepted", s)
		}
	}
}
