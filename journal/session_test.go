package journal

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/agmem/agmem/memory"
)

// FuzzSessionJSON checks that a session's info is written as json.Marshal writes it,
// and read as json.Unmarshal reads it, or left to json.Unmarshal: whatever info, and
// whatever stored text.
func FuzzSessionJSON(f *testing.F) {
	f.Add(`{"id":"s","first":"2025-01-02T03:04:05Z","last":"2025-01-02T03:04:06.5+02:00","observations":3,"events":1,"pending":2,"pending_events":1,"pending_by_type":{"semantic":2},"commits":0,"source":"claude-code"}`, "s", 3, int64(1))
	f.Add(`{"id":"s","id":"t"}`, "<é\u2028>", -1, int64(1)<<62)
	f.Add(`{"ID":"s","first":null,"pending":1e3,"pending_by_type":{"a":1,"a":2},"last_commit":"\u00e9"}`, "", 0, int64(-5))
	f.Add(`{"first":"2025-01-02T03:04:05\u005a","pending":-0,"pending_by_type":null} `, "x\xff", 1<<40, int64(0))
	f.Fuzz(func(t *testing.T, stored, text string, n int, secs int64) {
		// Written: any info.
		// Times from year -6000 to 9999, most of them within json.Marshal's years.
		s := &SessionInfo{ID: text, First: time.Unix(secs%253402300800, int64(n)).UTC(), Last: time.Unix(secs%(1<<37), 0).In(time.FixedZone("", n%86400)),
			Observations: n, Events: -n, Pending: n / 2, PendingEvents: n % 7, Commits: n * 3, LastCommit: text, Source: text}
		if n%3 != 0 {
			s.PendingByType = map[memory.Type]int{memory.Type(text): n, memory.Semantic: 1, "<": -n}
		}
		want, wantErr := json.Marshal(s)
		got, err := marshalSession(s)
		if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("marshalSession = %s, %v\njson.Marshal = %s, %v", got, err, want, wantErr)
		}
		// Read: what was written, and any text, into info already there.
		for _, raw := range [][]byte{want, []byte(stored)} {
			start := SessionInfo{ID: "before", PendingByType: map[memory.Type]int{"kept": 1}}
			fast, general := start, start
			fast.PendingByType, general.PendingByType = map[memory.Type]int{"kept": 1}, map[memory.Type]int{"kept": 1}
			if !readSession(raw, &fast) {
				if !reflect.DeepEqual(fast, start) {
					t.Fatalf("readSession(%q) refused it and changed the info: %+v", raw, fast)
				}
				continue
			}
			if err := json.Unmarshal(raw, &general); err != nil {
				t.Fatalf("readSession reads %q, json.Unmarshal refuses it: %v", raw, err)
			}
			if !reflect.DeepEqual(fast, general) {
				t.Fatalf("readSession(%q)\n = %+v\nwant %+v", raw, fast, general)
			}
		}
	})
}

// TestSessionReadFast keeps readSession reading what marshalSession writes, so that a
// record reads its session without encoding/json.
func TestSessionReadFast(t *testing.T) {
	s := &SessionInfo{ID: "s", First: t0, Last: t0.Add(time.Second), Observations: 2, Pending: 1,
		PendingByType: map[memory.Type]int{memory.Semantic: 1}, Commits: 1, LastCommit: "abc", Source: "test"}
	raw, err := marshalSession(s)
	if err != nil {
		t.Fatal(err)
	}
	var got SessionInfo
	if !readSession(raw, &got) || !reflect.DeepEqual(&got, s) {
		t.Fatalf("readSession(%s) = %+v, want %+v", raw, got, s)
	}
}
