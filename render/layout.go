package render

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/agmem/agmem/memory"
)

// Layout is a version of where a memory repo keeps its files (FORMAT.md §Layout). The
// repo says which it is written in with LayoutFile; one without is in Layout1. agmem
// writes CurrentLayout, and reads every one of Layouts: a repo is never rewritten, so
// a repo flushed before and after an upgrade holds both.
type Layout int

const (
	// Layout1 keeps semantic and procedural markdown flat in current/<type>/, and each
	// session's records in sessions/<session>/: both grow with the life of the repo.
	Layout1 Layout = 1
	// Layout2 keeps the markdown of every memory type by day, and session records in
	// 256 buckets, sessions/<bucket>/<session>/: no directory grows by more than one
	// entry a day (sessions/<bucket>/, while fewer than 256 sessions start a day).
	Layout2 Layout = 2

	CurrentLayout = Layout2
)

// Layouts are the layouts agmem reads, newest first.
var Layouts = []Layout{Layout2, Layout1}

// LayoutFile, at the repo root, holds the layout's number and a newline.
const LayoutFile = ".agmem-layout"

// File is the content of LayoutFile for l.
func (l Layout) File() []byte { return []byte(strconv.Itoa(int(l)) + "\n") }

// ParseLayout reads LayoutFile's content.
func ParseLayout(data []byte) (Layout, error) {
	n, err := strconv.Atoi(string(bytes.TrimSpace(data)))
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s: %q is not a layout version", LayoutFile, bytes.TrimSpace(data))
	}
	return Layout(n), nil
}

// Path is where an observation's markdown lives, relative to the repo root, with '/'
// separators:
//
//	Layout2, every type: current/<type>/YYYY-MM-DD/HH-MM-SS-<tool>-<short id>.md
//	Layout1, episodic:   current/episodic/YYYY-MM-DD/HH-MM-SS-<tool>-<short id>.md
//	Layout1, semantic:   current/semantic/<tool>-<short id>.md
//	Layout1, procedural: current/procedural/<tool>-<short id>.md
//
// Date and time are o.Timestamp in UTC; <tool> is SafeName(o.ToolName); <short id> is
// memory.ShortID(o.ID), or the whole id lowercased when long is true (the caller asks for
// long when the short path is already taken). Any other memory type counts as episodic.
func (l Layout) Path(o *memory.Observation, long bool) string {
	name := SafeName(o.ToolName) + "-" + idPart(o.ID, long) + ".md"
	typ := memory.Episodic
	if o.MemoryType == memory.Semantic || o.MemoryType == memory.Procedural {
		typ = o.MemoryType
	}
	if l == Layout1 && typ != memory.Episodic {
		return "current/" + string(typ) + "/" + name
	}
	t := o.Timestamp.UTC()
	return "current/" + string(typ) + "/" + t.Format("2006-01-02") + "/" + t.Format("15-04-05") + "-" + name
}

// A Form is one place a flush may have put an observation's markdown: its path in a
// layout, under the short name or the long one.
type Form struct {
	Layout Layout
	Long   bool
}

// Forms are every place, in the order readers look; Form numbers are an index in it.
var Forms = []Form{{Layout2, false}, {Layout2, true}, {Layout1, false}, {Layout1, true}}

// Path is o's markdown path in this form.
func (f Form) Path(o *memory.Observation) string { return f.Layout.Path(o, f.Long) }

// SessionsDir holds the session records.
const SessionsDir = "sessions"

// SessionDir is where a session's records are: sessions/<SafeName(session)> in Layout1,
// sessions/<bucket>/<SafeName(session)> in Layout2, the bucket the first byte of the
// SHA-256 of SafeName(session), in two lower-case hex digits. Two session ids may share
// a directory once made safe; the file names (batch ULIDs) keep records apart, and each
// entry carries its own session id.
func (l Layout) SessionDir(session string) string {
	name := SafeName(session)
	if l == Layout1 {
		return SessionsDir + "/" + name
	}
	sum := sha256.Sum256([]byte(name))
	return SessionsDir + "/" + hex.EncodeToString(sum[:1]) + "/" + name
}

// SessionRecordPath is where one flush batch of a session is recorded:
// <SessionDir>/<SafeName(batchID)>.jsonl.
func (l Layout) SessionRecordPath(session, batchID string) string {
	return l.SessionDir(session) + "/" + SafeName(batchID) + recordExt
}
