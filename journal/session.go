package journal

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"

	bolt "go.etcd.io/bbolt"

	"github.com/agmem/agmem/internal/jsonscan"
	"github.com/agmem/agmem/memory"
)

// A session's info is read and written on every record, and encoding/json's reflection
// over SessionInfo cost each hook's process about a tenth of a millisecond to set up
// (perf, 500 hook runs: 85 µs to read, 31 to write). It is written here, byte for byte
// as json.Marshal writes it, and read here when it is in that shape; anything else is
// read by encoding/json.

// getSession reads session id's info into s, as getJSON would, and says whether it was
// there.
func getSession(b *bolt.Bucket, id string, s *SessionInfo) bool {
	raw := b.Get([]byte(id))
	if raw == nil {
		return false
	}
	if readSession(raw, s) {
		return true
	}
	return json.Unmarshal(raw, s) == nil
}

// putSession writes session id's info s as putJSON would.
func putSession(b *bolt.Bucket, id string, s *SessionInfo) error {
	raw, err := marshalSession(s)
	if err != nil {
		return err
	}
	return b.Put([]byte(id), raw)
}

// marshalSession is json.Marshal(s), byte for byte.
func marshalSession(s *SessionInfo) ([]byte, error) {
	first, err := s.First.MarshalJSON()
	if err != nil {
		return json.Marshal(s) // the error as encoding/json words it
	}
	last, err := s.Last.MarshalJSON()
	if err != nil {
		return json.Marshal(s)
	}
	b := make([]byte, 0, 256)
	b = jsonscan.AppendString(append(b, `{"id":`...), s.ID, true)
	b = append(append(b, `,"first":`...), first...)
	b = append(append(b, `,"last":`...), last...)
	b = strconv.AppendInt(append(b, `,"observations":`...), int64(s.Observations), 10)
	b = strconv.AppendInt(append(b, `,"events":`...), int64(s.Events), 10)
	b = strconv.AppendInt(append(b, `,"pending":`...), int64(s.Pending), 10)
	b = strconv.AppendInt(append(b, `,"pending_events":`...), int64(s.PendingEvents), 10)
	if len(s.PendingByType) > 0 {
		sep := `,"pending_by_type":{`
		for _, t := range slices.Sorted(maps.Keys(s.PendingByType)) {
			b = jsonscan.AppendString(append(b, sep...), string(t), true)
			b = strconv.AppendInt(append(b, ':'), int64(s.PendingByType[t]), 10)
			sep = ","
		}
		b = append(b, '}')
	}
	b = strconv.AppendInt(append(b, `,"commits":`...), int64(s.Commits), 10)
	if s.LastCommit != "" {
		b = jsonscan.AppendString(append(b, `,"last_commit":`...), s.LastCommit, true)
	}
	if s.Source != "" {
		b = jsonscan.AppendString(append(b, `,"source":`...), s.Source, true)
	}
	return append(b, '}'), nil
}

// readSession reads a session's info into s as json.Unmarshal would, and says false,
// having changed nothing, for what it does not read exactly so (jsonscan.Fields): a
// member name in another case or with an escape, a name twice, a null, a value of
// another type, a number that is not a whole one.
func readSession(raw []byte, s *SessionInfo) bool {
	got := *s
	r := jsonscan.New(raw)
	ok := r.Fields(sessionKeys[:], 0, func(r *jsonscan.Scanner, k int) bool {
		switch name := sessionKeys[k]; name {
		case "id":
			return r.String(&got.ID)
		case "first":
			return r.Time(&got.First)
		case "last":
			return r.Time(&got.Last)
		case "observations", "events", "pending", "pending_events", "commits":
			return jsonscan.Int(r, got.figure(name))
		case "last_commit":
			return r.String(&got.LastCommit)
		case "source":
			return r.String(&got.Source)
		case "pending_by_type":
			var ok bool
			got.PendingByType, ok = readCounts(r, s.PendingByType)
			return ok
		}
		return false
	}) && r.End()
	if ok {
		*s = got
	}
	return ok
}

// sessionKeys are SessionInfo's members as marshalSession writes them.
var sessionKeys = [...]string{"id", "first", "last", "observations", "events", "pending", "pending_events",
	"pending_by_type", "commits", "last_commit", "source"}

// figure is the count that a member name names.
func (s *SessionInfo) figure(name string) *int {
	switch name {
	case "observations":
		return &s.Observations
	case "events":
		return &s.Events
	case "pending":
		return &s.Pending
	case "pending_events":
		return &s.PendingEvents
	}
	return &s.Commits
}

// readCounts reads an object of counts by memory type, into into's counts as
// encoding/json decodes into a map it is given (a copy: into is left as it is until the
// whole info is read), or into a new map.
func readCounts(r *jsonscan.Scanner, into map[memory.Type]int) (map[memory.Type]int, bool) {
	counts := maps.Clone(into)
	if counts == nil {
		counts = map[memory.Type]int{}
	}
	return counts, r.Object(func(r *jsonscan.Scanner, name string) bool {
		var n int
		ok := jsonscan.Int(r, &n)
		counts[memory.Type(name)] = n
		return ok
	})
}
