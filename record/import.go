package record

import (
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
// open session alone. A transcript's prompts are left out of a session the journal
// held before the import (its hooks recorded them), counted as duplicates. What was imported before a failure stays; importing the files
// again adds only the rest (the id rule).
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
	held := heldBefore{r.journal, map[string]bool{}}
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
				if known, err := held.session(e.Session()); err != nil {
					return err
				} else if known && it.Prompt {
					// Its hooks recorded the session, this prompt too, when it came: the
					// same prompt, dated as the transcript dates it, would be another.
					f.Recorded = append(f.Recorded, Recorded{ID: e.ID(), Event: true, Duplicate: true})
					return nil
				}
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

// heldBefore says which sessions the journal held before an import wrote any of their
// entries: asked the first time the import reads an entry of each.
type heldBefore struct {
	j     *journal.Journal
	known map[string]bool
}

func (h heldBefore) session(id string) (bool, error) {
	if known, asked := h.known[id]; asked {
		return known, nil
	}
	_, known, err := h.j.Session(id)
	if err == nil && !known {
		known, err = h.j.WasForgotten(id)
	}
	h.known[id] = known
	return known, err
}

// decodeItem decodes what a file holds as any input is decoded.
func decodeItem(it importer.Item, p capture.Policy, now time.Time) (capture.Decoded, error) {
	if it.Call != nil {
		return capture.FromNative(*it.Call, p, now)
	}
	return capture.Decode(it.Object, p, now)
}
