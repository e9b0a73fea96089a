package memory

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// decodeSeeds are entries as agmem writes them, and texts that are not quite, each of
// which DecodeEntry must read as encoding/json does.
func decodeSeeds(tb testing.TB) []string {
	d := int64(42)
	full := Entry{Observation: &Observation{ID: "01JPB2N3V4W5X6Y7Z8A9B0C1D2", SessionID: "s-1", Timestamp: time.Date(2026, 3, 14, 9, 26, 53, 123456789, time.FixedZone("", 3600)),
		ToolName: "Bash", Arguments: json.RawMessage(`{"command":"go vet \u0026\u0026 echo \"<ok>\"","n":[1,2.5e3,{"x":null}]}`),
		Result: json.RawMessage(`"line\nbreak \u2028 <b>&amp;</b> é \ud83e\udd6b"`), MemoryType: Episodic, Summary: "Bash command=go vet && echo",
		Source: "claude-code", ToolUseID: "toolu_1", Cwd: "/home/ana", AgentID: "a", PromptID: "p", DurationMS: &d, Error: "exit 1: <boom>",
		Interrupted: true, NoResult: true, Redactions: 3, Truncated: map[string]int{"result": 70000, "error": 9}, Withheld: "*.env"}}
	event := Entry{Event: &Event{ID: "01JPB2N3V4W5X6Y7Z8A9B0C1D3", SessionID: "s-1", Timestamp: time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC),
		Name: "SessionStart", Text: "fix the\r\nbuild", Attrs: map[string]string{"model": "opus", "cwd": "/home/ana"}, Source: "codex", Redactions: 1}}
	var seeds []string
	for _, e := range []Entry{full, event, {Observation: &Observation{ID: "x", SessionID: "s", ToolName: "t", Arguments: json.RawMessage(`{}`)}}} {
		raw, err := json.Marshal(e)
		if err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, string(raw))
	}
	o, ev := seeds[0], seeds[1]
	return append(seeds,
		` {"observation" : { "id" : "a" , "arguments" : [ 1 , 2 ] , "result" : null } } `,
		`{"observation":{"ID":"a"}}`, `{"observation":{"id":"a","Id":"b"}}`, `{"OBSERVATION":{"id":"a"}}`,
		`{"observation":{"id":"a","id":"b"}}`, `{"observation":{"id":null}}`, `{"observation":{"duration_ms":null}}`,
		`{"observation":{"duration_ms":1e2}}`, `{"observation":{"duration_ms":1.0}}`, `{"observation":{"duration_ms":-0}}`,
		`{"observation":{"redactions":99999999999999999999}}`, `{"observation":{"interrupted":null}}`, `{"observation":{"interrupted":"true"}}`,
		`{"observation":{"truncated":{}}}`, `{"observation":{"truncated":{"a":1,"a":2}}}`, `{"observation":{"truncated":{"a":null}}}`,
		`{"observation":{"truncated":null}}`, `{"event":{"attrs":{}}}`, `{"event":{"attrs":{"k":1}}}`, `{"event":{"attrs":{"k\u00e9":"v\n"}}}`,
		`{"observation":{"id":"bad \xff utf-8 \ud800"}}`, `{"observation":{"unknown":{"deep":[[[]]]},"id":"a"}}`, `{"observation":{"ſummary":"x"}}`,
		`{"observation":{"\u0069d":"a"}}`, `{"observation":{"timestamp":"2026-13-01T00:00:00Z"}}`, `{"observation":{"timestamp":null}}`,
		`{"observation":{"timestamp":"2026-03-14T09:26:53\u002b01:00"}}`, `{"observation":{}}`, `{"event":{}}`, `{}`, `[]`, `null`, ``,
		`{"observation":{},"event":{}}`, `{"observation":{}}x`, `{"observation":{"id":"a"}`, `{"observation":{"arguments":}}`,
		`{"observation":null}`, `{"event":{"event":"Stop","text":"a\tb"}}`, `{"observation":{"memory_type":"semantic","result":""}}`,
		strings.Replace(o, `"id"`, `"id" `, 1), strings.Replace(ev, `}}`, `,"extra":true}}`, 1),
		`{"observation":{"arguments":`+strings.Repeat("[", 9998)+strings.Repeat("]", 9998)+`}}`,
		`{"observation":{"arguments":`+strings.Repeat("[", 9999)+strings.Repeat("]", 9999)+`}}`,
	)
}

// checkAsEncodingJSON fails unless DecodeEntry reads raw as json.Unmarshal does.
func checkAsEncodingJSON(t *testing.T, raw []byte) {
	got, err := DecodeEntry(raw)
	var want Entry
	wantErr := json.Unmarshal(raw, &want)
	switch {
	case (err == nil) != (wantErr == nil):
		t.Fatalf("%.200q: error %v, encoding/json's %v", raw, err, wantErr)
	case err == nil && !reflect.DeepEqual(got, want):
		t.Fatalf("%.200q:\n got %+v %+v\nwant %+v %+v", raw, got.Observation, got.Event, want.Observation, want.Event)
	}
}

func TestDecodeEntryAsEncodingJSON(t *testing.T) {
	for _, s := range decodeSeeds(t) {
		checkAsEncodingJSON(t, []byte(s))
	}
	// What agmem writes is read in the one pass, not by encoding/json.
	for _, s := range decodeSeeds(t)[:3] {
		if _, ok := scanEntry([]byte(s)); !ok {
			t.Errorf("%.100s: left to encoding/json", s)
		}
	}
}

func FuzzDecodeEntry(f *testing.F) {
	for _, s := range decodeSeeds(f) {
		f.Add([]byte(s))
	}
	f.Fuzz(checkAsEncodingJSON)
}

func BenchmarkDecodeEntry(b *testing.B) {
	raw, _ := json.Marshal(Entry{Observation: &Observation{ID: "01JPB2N3V4W5X6Y7Z8A9B0C1D2", SessionID: "bench-00001", Timestamp: time.Now().UTC(),
		ToolName: "Read", Arguments: json.RawMessage(`{"file_path":"src/net/http/server.go"}`), MemoryType: Semantic,
		Result:  json.RawMessage(`"` + strings.Repeat(`func (srv *Server) Serve(l net.Listener) error {\n\treturn nil\n}\n`, 16) + `"`),
		Summary: "Read file_path=src/net/http/server.go", Source: "codex", ToolUseID: "call-1", Cwd: "/home/ana/shop"}})
	for _, decode := range []struct {
		name string
		fn   func([]byte) error
	}{
		{"DecodeEntry", func(raw []byte) error { _, err := DecodeEntry(raw); return err }},
		{"encoding/json", func(raw []byte) error { var e Entry; return json.Unmarshal(raw, &e) }},
	} {
		b.Run(decode.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if err := decode.fn(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
