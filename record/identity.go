package record

import (
	"encoding/binary"
	"slices"

	"github.com/agmem/agmem/memory"
)

// identify gives e, the n-th entry of one input object, its id by the one rule every
// source follows (FORMAT.md §Identity):
//
//  1. an id the input gives wins;
//  2. else a call whose input names its session and tool_use_id is known by the two;
//  3. else an entry whose input dates it is known by what it holds;
//  4. else it keeps the new id capture gave it: a call that comes with neither id nor
//     time is new each time it comes.
//
// So the same history piped, imported or watched twice is kept once: the journal keeps
// one entry per id, and one call per session and tool_use_id. It runs before the entry
// is placed in a session its input does not name, so that the session input left to
// agmem is no part of what the entry is known by.
func identify(e memory.Entry, given, dated bool, n int) {
	o := e.Observation
	switch {
	case given:
	case o != nil && o.ToolUseID != "" && o.SessionID != "":
		e.SetID(memory.IDOf(o.Timestamp, fields(nil, "call", o.SessionID, o.ToolUseID)))
	case dated:
		e.SetID(memory.IDOf(e.Time(), content(e, n)))
	}
}

// content is what an entry holds, as its id is derived from it: every field the input
// gives, each written with its length so that no two entries write the same bytes,
// and n, its place in its input.
func content(e memory.Entry, n int) []byte {
	b := binary.AppendUvarint(nil, uint64(n))
	if o := e.Observation; o != nil {
		var duration string
		if o.DurationMS != nil {
			duration = string(binary.AppendVarint(nil, *o.DurationMS))
		}
		return fields(b, "observation", o.SessionID, string(binary.AppendVarint(nil, o.Timestamp.UnixNano())),
			o.ToolName, string(o.Arguments), string(o.Result), o.Error, o.Cwd, o.AgentID, duration,
			string(o.MemoryType), o.Summary)
	}
	v := e.Event
	b = fields(b, "event", v.SessionID, string(binary.AppendVarint(nil, v.Timestamp.UnixNano())), v.Name, v.Text)
	keys := make([]string, 0, len(v.Attrs))
	for k := range v.Attrs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b = fields(b, k, v.Attrs[k])
	}
	return b
}

// fields appends each field to b, its length first.
func fields(b []byte, fields ...string) []byte {
	for _, f := range fields {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	return b
}
