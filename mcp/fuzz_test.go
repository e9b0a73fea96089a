package mcp

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// FuzzTracker gives the tracker any lines from both sides, in turns: it never panics,
// nothing is left in flight once it ends, and every Call it makes holds JSON that
// capture can read.
func FuzzTracker(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":1}}}`),
		[]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"A"}],"structuredContent":{"content":"A"}}}`))
	f.Add([]byte("[{\"id\":\"x\",\"method\":\"tools/call\",\"params\":{\"name\":\"b\"}},{\"id\":2,\"method\":\"resources/read\"}]\n"+
		`{"method":"notifications/cancelled","params":{"requestId":"x"}}`),
		[]byte(`[{"id":2,"result":[1]},{"id":"x","error":{"code":1,"message":"m"}}]`))
	f.Add([]byte(`{"id":3,"method":"tools/call","params":{"name":"c","arguments":[1]}}`),
		[]byte(`{"id":3,"result":{"content":"not blocks","structuredContent":{"a":"\u2028"}}}`))
	f.Fuzz(func(t *testing.T, client, server []byte) {
		var calls []Call
		tr := newTracker([]string{"resources/read"}, func(c Call) { calls = append(calls, c) })
		at := time.Unix(0, 0)
		cs, ss := bytes.Split(client, []byte("\n")), bytes.Split(server, []byte("\n"))
		for i := 0; i < len(cs) || i < len(ss); i++ {
			at = at.Add(time.Millisecond)
			if i < len(cs) {
				tr.fromClient(cs[i], at)
			}
			if i < len(ss) {
				tr.fromServer(ss[i], at)
			}
		}
		tr.end("no answer", at.Add(time.Millisecond))
		if n := tr.inFlight(); n != 0 {
			t.Fatalf("%d left in flight", n)
		}
		for _, c := range calls {
			for name, v := range map[string]json.RawMessage{"arguments": c.Arguments, "result": c.Result} {
				if len(v) > 0 && !json.Valid(v) {
					t.Fatalf("%s of %s is not JSON: %q", name, c.Tool, v)
				}
			}
		}
	})
}
