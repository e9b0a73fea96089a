package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pierrec/lz4/v4"

	bolt "go.etcd.io/bbolt"

	"github.com/agmem/agmem/memory"
)

// Entries are stored compressed and read back as the JSON they were recorded as.
func TestEntriesStoredCompressed(t *testing.T) {
	j := newJournal(t)
	e := observation("s", "read_file", memory.Semantic, t0)
	e.Observation.Result, _ = json.Marshal(strings.Repeat("package main\n\nfunc main() {}\n", 100))
	want, _ := json.Marshal(e)
	mustAppend(t, j, t0, e, event("s", "SessionEnd", t0.Add(1)))

	var stored [][]byte
	if err := j.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketEntries).ForEach(func(_, v []byte) error {
			stored = append(stored, append([]byte(nil), v...))
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	if stored[0][0] != tagObservation || stored[1][0] != tagEvent {
		t.Fatalf("tags %#x, %#x: want an observation's, then an event's", stored[0][0], stored[1][0])
	}
	if len(stored[0]) >= len(want)/4 {
		t.Errorf("a %d-byte entry of repeated text is stored in %d bytes", len(want), len(stored[0]))
	}
	var got [][]byte
	if err := j.TimelineJSON("s", func(raw []byte) error {
		got = append(got, append([]byte(nil), raw...))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || string(got[0]) != string(want) {
		t.Errorf("TimelineJSON gave %d entries, the first:\n%s\nwant:\n%s", len(got), got[0], want)
	}
	if b, err := j.Backlog(); err != nil || b.Observations != 1 || b.Events != 1 {
		t.Errorf("Backlog = %+v, %v; want 1 observation and 1 event", b, err)
	}
}

// A journal of schema 1 holds entries as plain JSON: they are read as they are, a flush
// commits them, and the first write moves the journal to SchemaVersion.
func TestSchema1EntriesRead(t *testing.T) {
	j := newJournal(t)
	writeSchema(t, j.Path(), "1")
	old := observation("s", "read_file", memory.Semantic, t0)
	// Written as schema 1 did, with bbolt directly: this agmem's writes would move it to 2.
	db, err := bolt.Open(j.Path(), 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		a := newAppendTx(tx, nil, 1)
		raw, _ := json.Marshal(old)
		if _, _, err := a.entry(Prepared{head: headOf(old), value: raw}); err != nil {
			return err
		}
		return a.finish()
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := readSchema(t, j.Path()); got != "1" {
		t.Fatalf("schema = %q before any write of this agmem", got)
	}
	if b, err := j.Backlog(); err != nil || b.Observations != 1 {
		t.Errorf("Backlog = %+v, %v", b, err)
	}

	mustAppend(t, j, t0, observation("s", "write_file", memory.Procedural, t0.Add(1)))
	if got := readSchema(t, j.Path()); got != strconv.Itoa(SchemaVersion) {
		t.Errorf("schema = %q after a write, want %d", got, SchemaVersion)
	}
	if got := ids(timeline(t, j, "s")); len(got) != 2 || got[0] != old.ID() {
		t.Errorf("timeline %v, want the schema 1 entry %s first", got, old.ID())
	}
	batches, err := j.PrepareBatches("", t0)
	if err != nil || len(batches) != 1 || len(batches[0].Entries) != 2 {
		t.Fatalf("PrepareBatches = %+v, %v", batches, err)
	}
}

// A stored entry of no known kind is an error, not a panic or a silent skip.
func TestUnknownEntryKind(t *testing.T) {
	for _, stored := range [][]byte{nil, {9, 1, 2}, {tagObservation, 0xff, 0xff, 0xff}} {
		if _, err := decodeEntry(stored); err == nil {
			t.Errorf("decodeEntry(%x) read an entry", stored)
		}
	}
}

// A stored entry that does not decompress, or holds neither kind, is damage: an error
// that says so, never a panic.
func TestBrokenEntryIsDamage(t *testing.T) {
	for name, stored := range map[string][]byte{
		"cut length":   {tagObservation, 0xff, 0xff, 0xff},
		"huge length":  {tagObservation, 0xff, 0xff, 0xff, 0xff, 0x7f},
		"cut block":    compressed(tagObservation, `{"observation":{"id":"x","tool_name":"read_file"}}`)[:8],
		"length lie":   append([]byte{tagObservation, 99}, compressed(tagObservation, `{"observation":{"id":"x"}}`)[2:]...),
		"neither kind": compressed(tagObservation, `{"observatioo":{"id":"x"}}`),
		// What a flush's count of a batch reads is whole, the rest is not.
		"mistyped": compressed(tagObservation, `{"observation":{"id":"x","memory_type":"semantic","timestamp":5}}`),
	} {
		// A flush counts what the pending set says of an entry; of an entry pending
		// from before it said anything, it reads the kind and memory type.
		for _, before := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/pending from before %t", name, before), func(t *testing.T) {
				j := newJournal(t)
				mustAppend(t, j, t0, observation("s", "read_file", memory.Semantic, t0))
				writeRaw(t, j, func(tx *bolt.Tx) error {
					if before {
						if err := tx.Bucket(bucketPending).Put(sessionKey("s", seqKey(1)), nil); err != nil {
							return err
						}
					}
					return tx.Bucket(bucketEntries).Put(seqKey(1), stored)
				})
				if err := j.Timeline("s", func(memory.Entry) error { return nil }); !errors.Is(err, ErrDamaged) {
					t.Errorf("Timeline: %v, want ErrDamaged", err)
				}
				findings, err := j.Check()
				if err != nil || len(findings) == 0 {
					t.Errorf("Check = %q, %v; want a finding", findings, err)
				}
				// Decoded after the journal is let go, and damage all the same. Damage
				// that a batch's count reads leaves the entry pending; the rest is found
				// with the batch planned.
				if _, err := j.PrepareBatches("", t0); !errors.Is(err, ErrDamaged) {
					t.Errorf("PrepareBatches: %v, want ErrDamaged", err)
				}
				b, err := j.Backlog()
				if planned := !before || name == "mistyped"; err != nil || (b.Batches == 1) != planned || (b.Events+b.Observations == 1) == planned {
					t.Errorf("after PrepareBatches: %+v, %v; want the batch planned: %t", b, err, planned)
				}
			})
		}
	}
}

// A stored length LZ4 could not expand its block to is damage, found before the
// length is allocated: 1 GiB claimed for a byte.
func TestLyingLengthAllocatesNothing(t *testing.T) {
	stored := []byte{tagObservation, 0x80, 0x80, 0x80, 0x80, 0x04, 0}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := entryJSON(stored)
	runtime.ReadMemStats(&after)
	if !errors.As(err, new(damage)) {
		t.Errorf("entryJSON = %v, want damage", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("entryJSON allocated %d bytes for a 7-byte entry", grew)
	}
}

// compressed is json stored as a compressed entry would be, whether or not that is
// shorter.
func compressed(tag byte, json string) []byte {
	buf := make([]byte, 2+lz4.CompressBlockBound(len(json)))
	buf[0], buf[1] = tag, byte(len(json)) // a one-byte uvarint: json is short
	n, err := new(lz4.Compressor).CompressBlock([]byte(json), buf[2:])
	if err != nil || len(json) >= 0x80 {
		panic("compressed: json too long")
	}
	return buf[:2+n]
}

// An entry that does not compress is stored as its JSON, and read back as such.
func TestIncompressibleEntryStoredPlain(t *testing.T) {
	e := event("s", "SessionStart", t0)
	rng := rand.New(rand.NewPCG(1, 2))
	text := make([]byte, 512)
	for i := range text {
		text[i] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[rng.IntN(62)] // no run repeats
	}
	e.Event.Text = string(text)
	stored, err := encodeEntry(e)
	if err != nil || stored[0] != '{' {
		t.Fatalf("encodeEntry = %q, %v; want plain JSON", stored, err)
	}
	back, err := decodeEntry(stored)
	if err != nil || back.Event == nil || back.Event.Name != "SessionStart" {
		t.Fatalf("decodeEntry = %+v, %v", back, err)
	}
}

// After gc, every index still points at an entry (a stub): Check finds nothing wrong.
func TestCheckAfterForget(t *testing.T) {
	j := newJournal(t)
	end := event("s", "SessionEnd", t0.Add(2))
	mustAppend(t, j, t0, observation("s", "read_file", memory.Semantic, t0), call("s", "toolu_1", t0.Add(1)), end)
	commitAll(t, j, t0)
	if f, err := j.Forget(t0.Add(7 * 24 * time.Hour)); err != nil || f.Entries != 3 {
		t.Fatalf("Forget = %+v, %v", f, err)
	}
	if findings, err := j.Check(); err != nil || len(findings) != 0 {
		t.Errorf("Check after gc = %q, %v; want nothing", findings, err)
	}
	if again := mustAppend(t, j, t0, end); !again[0].Duplicate {
		t.Errorf("an event recorded again after gc was kept twice")
	}
}

// TestMarshalEntryWritesEveryMember keeps marshalEntry's hand-written observation in
// step with memory.Observation: a member added to the struct, set here by reflection,
// must show up as json.Marshal writes it.
func TestMarshalEntryWritesEveryMember(t *testing.T) {
	e := observation("s", "Read", memory.Semantic, t0)
	v := reflect.ValueOf(e.Observation).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch {
		case f.Type() == reflect.TypeFor[json.RawMessage]():
			f.SetBytes([]byte(`{"<` + v.Type().Field(i).Name + `>":1}`))
		case f.Kind() == reflect.String:
			f.SetString("<" + v.Type().Field(i).Name + ">")
		case f.Kind() == reflect.Int:
			f.SetInt(int64(i))
		case f.Kind() == reflect.Bool:
			f.SetBool(true)
		case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Int64:
			f.Set(reflect.New(f.Type().Elem()))
			f.Elem().SetInt(int64(i))
		case f.Kind() == reflect.Map:
			f.Set(reflect.ValueOf(map[string]int{"b": 2, "a&": 1}))
		case f.Type() != reflect.TypeFor[time.Time]():
			t.Fatalf("member %s of a kind this test does not set", v.Type().Field(i).Name)
		}
	}
	want, _ := json.Marshal(e)
	got, err := marshalEntry(nil, e)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("marshalEntry = %s, %v\njson.Marshal = %s", got, err, want)
	}
}

// FuzzMarshalEntry checks that marshalEntry writes what json.Marshal writes, byte for
// byte, or fails as it does, whatever an observation's arguments, result and text hold.
func FuzzMarshalEntry(f *testing.F) {
	for _, c := range [][3]string{
		{`{"path":"a.go"}`, `"package a\n<b> & \u2028 é"`, "Read"},
		{`{"command":"ls -l","n":[1,2.5e3,true,null]}`, ``, "Bash"},
		{` {"path": "a"}`, `"x"`, "Read"},
		{`{"a":-0e-0}`, `-0e-0`, `"arguments":-0e-0`},
		{`{"a":1}`, `{"result":-0e-0,"x":"\"result\":-0e-0"}`, "t"},
		{`[1,]`, `"x"`, "Read"},
		{`{}`, "\"\xff\xe2\x80\xa8<\"", "Read"},
		{``, `"x"`, "Read"},
	} {
		f.Add([]byte(c[0]), []byte(c[1]), c[2])
	}
	f.Fuzz(func(t *testing.T, args, result []byte, text string) {
		// Mostly what capture writes, compact and valid, for the splice; else as given.
		if len(args)%3 != 0 {
			args, _ = json.Marshal(map[string]any{"path": string(args), "n": len(text)})
		}
		if len(result)%3 == 1 {
			result, _ = json.Marshal(string(result) + text)
		}
		e := observation("s", text, memory.Episodic, t0)
		o := e.Observation
		o.Arguments, o.Result, o.Summary = args, result, text
		o.Timestamp = t0.Add(time.Duration(len(text)) * time.Hour).In(time.FixedZone("", 3600*(len(text)%40-20)))
		if len(text)%8 == 7 {
			o.Timestamp = o.Timestamp.AddDate(8000, 0, 0) // past 9999: json.Marshal refuses it
		}
		o.Truncated = map[string]int{text: 0, "result": len(args)}
		if len(text)%2 == 1 { // every other member, in turn, holds text or is left out
			n := int64(len(text)) - 3
			o.ID, o.Cwd, o.Error, o.Redactions, o.DurationMS = text, text, text, len(text), &n
		} else {
			o.SessionID, o.Source, o.ToolUseID, o.AgentID, o.Withheld, o.MemoryType = text, text, text, text, text, memory.Type(text)
		}
		want, wantErr := json.Marshal(e)
		got, err := marshalEntry(nil, e)
		if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("marshalEntry = %q, %v\njson.Marshal = %q, %v", got, err, want, wantErr)
		}
	})
}
