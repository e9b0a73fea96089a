package recall

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/agmem/agmem/internal/jsonscan"
)

var headLines = []string{
	`{"observation":{"id":"01A","session_id":"s1","timestamp":"2026-11-30T09:00:01.5Z","tool_name":"Bash","arguments":{"command":"ls -l"},"result":"a\nb\t\"c\"\\ \u00e9 <>&","memory_type":"episodic","summary":"Bash command=ls -l","duration_ms":12,"truncated":{"result":40000}}}`,
	`{"event":{"id":"01B","session_id":"s1","timestamp":"2026-11-30T09:00:02+01:00","event":"SessionStart","attrs":{"model":"m"}}}`,
	` { "observation" : { "id" : "01C" , "session_id" : "s1" , "timestamp" : "2026-11-30T09:00:03Z" , "tool_name" : "t" , "x" : [ 1 , -2.5e+3 , true , false , null , { } , [ ] ] } } `,
	`{"observation":{}}`,
	`{"event":{"id":"01D","session_id":"s1","tool_name":"ignored","timestamp":"2026-11-30T09:00:04Z"}}`,
	`{"observation":{"id":"01E","x":` + strings.Repeat("[", jsonscan.MaxDepth-2) + strings.Repeat("]", jsonscan.MaxDepth-2) + `}}`,
}

// Lines scanHead leaves to encoding/json: it cannot say what they mean without the
// decoder's rules, or they are not JSON.
var decoderLines = []string{
	`{"observation":{"ID":"01A","session_id":"s1","timestamp":"2026-11-30T09:00:01Z","tool_name":"t"}}`,
	`{"observation":{"id":"01A","Session_Id":"s2","session_id":"s1","timestamp":"2026-11-30T09:00:01Z","tool_name":"t"}}`,
	`{"observation":{"id":"01A","ſession_id":"s2","timestamp":"2026-11-30T09:00:01Z","tool_name":"t"}}`,
	`{"observation":{"i\u0064":"01A","session_id":"s1","timestamp":"2026-11-30T09:00:01Z","tool_name":"t"}}`,
	`{"observation":{"id":"0\u00311A","session_id":"s1","timestamp":"2026-11-30T09:00:01Z","tool_name":"t"}}`,
	`{"observation":{"id":"01A","id":"01B","session_id":"s1","timestamp":"2026-11-30T09:00:01Z","tool_name":"t"}}`,
	`{"observation":{"id":"01A","session_id":null,"timestamp":"2026-11-30T09:00:01Z","tool_name":"t"}}`,
	`{"observation":{"id":"01A","session_id":"s1","timestamp":null,"tool_name":"t"}}`,
	`{"observation":{"id":"01A","session_id":"s1","timestamp":"yesterday","tool_name":"t"}}`,
	`{"observation":{"id":"01A","session_id":"s1","timestamp":"2026-11-30T09:00:01Z","tool_name":5}}`,
	`{"observation":{"id":"\xff","session_id":"s1","timestamp":"2026-11-30T09:00:01Z","tool_name":"t"}}`,
	`{"observation":{"id":"01A"},"event":{"id":"01B"}}`,
	`{"observation":{"id":"01A"},"observation":{"session_id":"s1"}}`,
	`{"Observation":{"id":"01A"}}`,
	`{"observation":null}`,
	`{"extra":1,"observation":{"id":"01A"}}`,
	`null`,
	`{"observation":{"id":"01A","x":01}}`,
	`{"observation":{"id":"01A","x":1.}}`,
	`{"observation":{"id":"01A","x":"a` + "\t" + `b"}}`,
	`{"observation":{"id":"01A","x":"\x"}}`,
	`{"observation":{"id":"01A","x":"\u12"}}`,
	`{"observation":{"id":"01A","x":tru}}`,
	`{"observation":{"id":"01A","x":[1,]}}`,
	`{"observation":{"id":"01A",}}`,
	`{"observation":{"id":"01A"}}}`,
	`{"observation":{"id":"01A"}} x`,
	`{"observation":{"id":"01A"}` + "\x00",
	`{"observation":{"id":"01A","x":"` + strings.Repeat("a", 20),
	`{"observation":{"id":"01A","x":` + strings.Repeat("[", jsonscan.MaxDepth-1) + strings.Repeat("]", jsonscan.MaxDepth-1) + `}}`,
}

func TestScanHead(t *testing.T) {
	for _, line := range headLines {
		if _, _, ok := scanHead([]byte(line)); !ok {
			t.Errorf("scanHead(%.80s) leaves it to the decoder", line)
		}
		checkScanHead(t, []byte(line))
	}
	for _, line := range decoderLines {
		if _, _, ok := scanHead([]byte(line)); ok {
			t.Errorf("scanHead(%.80s) reads it", line)
		}
	}
}

// checkScanHead fails if scanHead reads a line otherwise than encoding/json does.
func checkScanHead(t *testing.T, line []byte) {
	h, event, ok := scanHead(line)
	if !ok {
		return
	}
	if !json.Valid(line) {
		t.Fatalf("scanHead reads %q, which is not JSON", line)
	}
	want, err := decodeHead(line)
	if err != nil {
		t.Fatalf("scanHead reads %q, which the decoder refuses: %v", line, err)
	}
	got := entryHead{Observation: &h}
	if event {
		got = entryHead{Event: &h}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("scanHead(%q) = %+v %+v, the decoder %+v %+v", line, got.Observation, got.Event, want.Observation, want.Event)
	}
}

func FuzzScanHead(f *testing.F) {
	for _, line := range append(headLines, decoderLines...) {
		f.Add([]byte(line))
	}
	f.Fuzz(checkScanHead)
}
