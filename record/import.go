package record

import (
	"bytes"
	"fmt"
	"time"

	"github.com/agmem/agmem/capture"
	"github.com/agmem/agmem/capture/importer"
	"github.com/agmem/agmem/journal"
	"github.com/agmem/agmem/memory"
)

// An import is recorded a chunk at a time, each chunk in one transaction of its own, at
// most this many entries or about this many bytes of input: an import never holds the
// journal long, and never holds a whole file in memory.
const (
	importChunk      = 1000
	importChunkBytes = 1 << 20
)

// Imported is what one file gave.
type Imported struct {
	importer.File
	// Outcome's Recorded are the entries the file holds, new or recorded before, and
	// NotCaptured why others were left out; Refused is not used: what the file holds
	// that is no entry agmem knows is counted in NotUnderstood.
	Outcome
}

// Import records history kept elsewhere (see package importer): each file recognised
// by its content, each entry decoded as every other input is, and placed in the
// session its file gives when it names none. Entries recorded elsewhere leave agmem's
// open session alone. A transcript's prompt that the journal held already, recorded by
// a hook when it came (hookPrompts), is counted as a duplicate. What was imported
// before a failure stays; importing the files again adds only the rest (the id rule).
func (r *Recorder) Import(paths []string, progress importer.Progress) ([]Imported, error) {
	files, err := importer.Open(paths, r.maxInput)
	if err != nil {
		return nil, err
	}
	out := make([]Imported, len(files))
	for i := range files {
		out[i].File = files[i]
	}
	if r.off != "" {
		for i := range out {
			out[i].NotCaptured = []string{r.off}
		}
		return out, nil
	}
	now := time.Now()
	hooked := hookPrompts{r.journal, map[string][]*memory.Event{}}
	for i := range out {
		f := &out[i]
		var chunk []admitted
		size := 0
		flush := func() error {
			err := r.write(chunk, journal.AppendOptions{Now: now, Elsewhere: true}, &f.Outcome)
			chunk, size = chunk[:0], 0
			return err
		}
		err := importer.Read(&f.File, r.maxInput, progress, func(it importer.Item) error {
			d, err := decodeItem(it, r.policy, now)
			if err != nil {
				f.NotUnderstood++
				return nil
			}
			kept, err := r.admit(d, func(e memory.Entry) string {
				if it.Session != "" {
					return it.Session
				}
				return f.Session(e.ID())
			}, &f.Outcome)
			if err != nil {
				f.NotUnderstood++
				return nil
			}
			for _, e := range d.Entries {
				if f.Format != importer.Transcript {
					break // only a transcript holds prompts a hook may have recorded
				}
				if err := hooked.read(e.Session()); err != nil {
					return err
				}
			}
			if it.Prompt && len(kept) > 0 && hooked.twin(d.Entries[0]) {
				f.Recorded = append(f.Recorded, Recorded{ID: d.Entries[0].ID(), Event: true, Duplicate: true})
				return nil
			}
			chunk = append(chunk, kept...)
			size += len(it.Object)
			if len(chunk) >= importChunk || size >= importChunkBytes {
				return flush()
			}
			return nil
		})
		if err == nil {
			err = flush()
		}
		if err != nil {
			return out[:i+1], fmt.Errorf("%s: %w", f.Path, err)
		}
	}
	return out, nil
}

// hookPrompts are the prompts the journal held of each session an import reads before
// the import wrote any entry of it, read the first time the import reads one: a hook
// recorded each prompt of its session when it came, and the same prompt dated as a
// transcript dates it would be a second one.
type hookPrompts struct {
	j    *journal.Journal
	held map[string][]*memory.Event // nil once each is taken as a transcript's prompt's twin
}

// twinWithin is how far apart a hook and a transcript date one prompt, at most: both
// when it was sent, on one machine's clock.
const twinWithin = time.Minute

func (h hookPrompts) read(session string) error {
	if _, ok := h.held[session]; ok {
		return nil
	}
	var prompts []*memory.Event
	err := h.j.TimelineJSON(session, func(raw []byte) error {
		if !bytes.Contains(raw, []byte(`"UserPromptSubmit"`)) { // a call, most of a session: not decoded
			return nil
		}
		e, err := memory.DecodeEntry(raw)
		if err == nil && e.Event != nil && e.Event.Name == "UserPromptSubmit" {
			prompts = append(prompts, e.Event)
		}
		return err
	})
	h.held[session] = prompts
	return err
}

// twin says whether the journal held the transcript's prompt e already, recorded by a
// hook (or by an import of the same transcript): the same text, dated within
// twinWithin. Each held prompt is the twin of one only.
func (h hookPrompts) twin(e memory.Entry) bool {
	v := e.Event
	for i, held := range h.held[v.SessionID] {
		if held != nil && held.Text == v.Text && held.Timestamp.Sub(v.Timestamp).Abs() <= twinWithin {
			h.held[v.SessionID][i] = nil
			return true
		}
	}
	return false
}

// decodeItem decodes what a file holds as any input is decoded.
func decodeItem(it importer.Item, p capture.Policy, now time.Time) (capture.Decoded, error) {
	if it.Call != nil {
		return capture.FromNative(*it.Call, p, now)
	}
	return capture.Decode(it.Object, p, now)
}
