package capture

import (
	"encoding/json"
	"maps"

	"github.com/agmem/agmem/classify"
	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/redact"
)

// DefaultPolicy is capture's policy when nothing is configured.
func DefaultPolicy() Policy {
	return Policy{Rules: classify.Default(), Redactor: redact.Default(), Withhold: DefaultWithhold(), MaxValue: DefaultMaxValue}
}

// Redacted is an entry that another agmem recorded (a fetched branch's: another
// version, settings or person wrote it) as this one records with p: every value
// redacted and bounded, a withheld file's contents withheld, its session id made safe
// (SafeSession). What it had redacted or cut stays, counted with what now is. Readers
// give back nothing that capture would not have let in.
func Redacted(e memory.Entry, p Policy) memory.Entry {
	p.reread = true
	switch {
	case e.Observation != nil:
		o := *e.Observation
		redactions, cuts := o.Redactions, o.Truncated
		if err := p.sanitize(&o); err != nil {
			// Not JSON after all (it was read as JSON: it cannot be): nothing of it is kept.
			o.Arguments, o.Result = json.RawMessage(`{}`), json.RawMessage(`null`)
		}
		o.Redactions += redactions
		o.SessionID = p.SafeSession(o.SessionID)
		if len(cuts) > 0 { // o.Truncated is the sanitizer's own map, or nil
			if o.Truncated == nil {
				o.Truncated = map[string]int{}
			}
			maps.Copy(o.Truncated, cuts) // the sizes it had first
		}
		e.Observation = &o
	case e.Event != nil:
		ev := *e.Event // the sanitizer makes its attributes a map of their own
		redactions := ev.Redactions
		p.sanitizeEvent(&ev)
		ev.Redactions += redactions
		ev.SessionID = p.SafeSession(ev.SessionID)
		e.Event = &ev
	}
	return e
}
