package journal

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/agmem/agmem/internal/failpoint"
	"github.com/agmem/agmem/memory"
)

// SessionInfo is what the journal knows of one session.
type SessionInfo struct {
	ID            string              `json:"id"`
	First         time.Time           `json:"first"`
	Last          time.Time           `json:"last"`
	Observations  int                 `json:"observations"`
	Events        int                 `json:"events"`
	Pending       int                 `json:"pending"` // observations not yet in a commit
	PendingEvents int                 `json:"pending_events"`
	PendingByType map[memory.Type]int `json:"pending_by_type,omitempty"`
	Commits       int                 `json:"commits"`
	LastCommit    string              `json:"last_commit,omitempty"`
	Source        string              `json:"source,omitempty"`
}

// Appended is what became of one entry given to Append.
type Appended struct {
	ID        string // the entry's id; for a duplicate, the id of the entry kept
	Duplicate bool   // already recorded (same id, or same session and tool_use_id): kept once
	Spooled   bool   // kept aside while another process held the journal: appended by the next write
}

type openSession struct {
	ID   string    `json:"id"`
	Last time.Time `json:"last"`
}

// AppendOptions say how an append joins what the journal holds.
type AppendOptions struct {
	// IdleGap and Now place an entry that names no session: it joins the open session,
	// which is replaced by a new one after IdleGap without activity, and after a
	// SessionStart or SessionEnd event.
	IdleGap time.Duration
	Now     time.Time
	// Elsewhere says the entries were recorded somewhere else (an import): each names
	// its session, and a SessionStart or SessionEnd among them ends no session of the
	// live agent's.
	Elsewhere bool
	// Watched, when set, moves a followed file's mark in the same transaction as the
	// entries read up to it, so that a line is recorded exactly once whatever moment
	// the reader dies at.
	Watched *Watched
}

// Watched is a followed file and how far its entries have now been read.
type Watched struct {
	Path string
	Mark WatchMark
}

// Append records entries in one transaction: all of them are durable when it returns,
// or none is. Entries must carry ids; one that names no session is placed as o says,
// and the session chosen is written back into it. An entry recorded before (the same
// id, or the same session and tool_use_id) is kept once.
//
// When another process holds the journal past SpoolAfter (else Timeout), the entries
// are kept aside, durable, for the next write to append (spool.go), and said Spooled;
// not those of a followed file, whose mark must move in the same transaction.
func (j *Journal) Append(entries []Prepared, o AppendOptions) ([]Appended, error) {
	wait := j.Timeout
	if j.SpoolAfter > 0 && o.Watched == nil {
		wait = min(wait, j.SpoolAfter)
	}
	lock, err := j.acquire(wait)
	if errors.Is(err, ErrLocked) && o.Watched == nil {
		out, serr := j.spool(entries, o)
		if serr == nil || wait >= j.Timeout {
			return out, serr
		}
		// Kept aside it cannot be (a spool this user may not write): it waits what is
		// left of Timeout, as before there was a spool.
		lock, err = j.acquire(j.Timeout - wait)
		if err != nil {
			return nil, serr
		}
	}
	if err != nil {
		return nil, err
	}
	var out []Appended
	err = j.holding(lock, false, updating(func(tx *bolt.Tx) error {
		var err error
		if out, err = appendAll(tx, entries, o); err != nil {
			return err
		}
		if o.Watched != nil {
			return putJSON(tx.Bucket(bucketWatches), []byte(o.Watched.Path), &o.Watched.Mark)
		}
		return nil
	}))
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Prepared is an entry encoded as the journal stores it, ahead of the transaction that
// stores it: a large --jsonl holds each line's few hundred compressed bytes until its
// transaction (or until a Staging stores them), and the few fields its indexes need,
// not the line's decoded entry. An entry that is to join the open session is held as it
// is, and encoded in the transaction.
type Prepared struct {
	entry *memory.Entry // not encoded yet; nil for an encoded entry
	head  head          // of an encoded entry, what the indexes need
	value []byte        // the encoded entry; nil once stored
	seq   uint64        // where the entry is stored already; 0: not stored yet
}

// head is what a transaction reads of an entry it appends: the keys of its indexes and
// its session's counts.
type head struct {
	id, session, toolUseID, source string
	event                          string // an event's name; "" for an observation
	memoryType                     memory.Type
	at                             time.Time
	noResult                       bool // a call reported before its result
}

func headOf(e memory.Entry) head {
	h := head{id: e.ID(), session: e.Session(), at: e.Time(), source: e.Source()}
	if o := e.Observation; o != nil {
		h.toolUseID, h.memoryType, h.noResult = o.ToolUseID, o.MemoryType, o.NoResult
	} else {
		h.event = e.Event.Name
	}
	return h
}

// Prepare encodes e. An entry that names no session is left as it is, to join the
// open session in the transaction.
func Prepare(e memory.Entry) (Prepared, error) {
	if (e.Observation != nil || e.Event != nil) && e.Session() == "" {
		return Prepared{entry: &e}, nil
	}
	if err := e.Validate(); err != nil {
		return Prepared{}, err
	}
	return encoded(e)
}

// encoded is e, valid and in its session, encoded.
func encoded(e memory.Entry) (Prepared, error) {
	value, err := encodeEntry(e)
	if err != nil {
		return Prepared{}, fmt.Errorf("encode %s: %w", e.ID(), err)
	}
	return Prepared{head: headOf(e), value: value}, nil
}

// Entries readies entries for Append as they are: each is checked, placed in a session
// and encoded in the transaction. Prepare does the encoding ahead, outside the lock.
func Entries(entries []memory.Entry) []Prepared {
	out := make([]Prepared, len(entries))
	for i := range entries {
		out[i] = Prepared{entry: &entries[i]}
	}
	return out
}

// Size is about how many bytes of memory the entry holds until it is stored: encoded,
// its bytes; not encoded yet, those of its largest values.
func (p Prepared) Size() int {
	if e := p.entry; e != nil {
		n := 256
		if o := e.Observation; o != nil {
			n += len(o.Arguments) + len(o.Result) + len(o.Error) + len(o.Summary)
		}
		return n
	}
	return len(p.value)
}

// Observation tells an observation from an event.
func (p Prepared) Observation() bool {
	if p.entry != nil {
		return p.entry.Observation != nil
	}
	return p.head.event == ""
}

// event is the entry's name if it is an event, else "".
func (p Prepared) event() string {
	switch {
	case p.entry == nil:
		return p.head.event
	case p.entry.Event != nil:
		return p.entry.Event.Name
	}
	return ""
}

// appendAll is the body of Append's transaction.
func appendAll(tx *bolt.Tx, entries []Prepared, o AppendOptions) ([]Appended, error) {
	out := make([]Appended, len(entries))
	// Entries and ids mostly arrive in key order: full pages, not half-empty ones, keep
	// the file near the size of what it holds.
	tx.Bucket(bucketEntries).FillPercent = appendFill
	a := newAppendTx(tx, nil, len(entries))
	var open *openSession // as this transaction leaves it; nil while untouched
	closed := false       // a session boundary passed: the next entry without one starts anew
	for i, p := range entries {
		event := p.event()
		if event == "SessionStart" && !o.Elsewhere {
			open, closed = nil, true
		}
		if e := p.entry; e != nil {
			// An entry that holds neither kind has no session to read; Validate refuses it.
			if (e.Observation != nil || e.Event != nil) && e.Session() == "" && !o.Elsewhere {
				if open == nil {
					open = currentSession(tx, o.IdleGap, o.Now, closed)
				}
				e.SetSession(open.ID)
			}
			if err := e.Validate(); err != nil {
				return nil, fmt.Errorf("entry %d: %w", i+1, err)
			}
			var err error
			if p, err = encoded(*e); err != nil {
				return nil, fmt.Errorf("entry %d: %w", i+1, err)
			}
		}
		if event == "SessionEnd" && !o.Elsewhere {
			open, closed = nil, true
		}
		var err error
		if out[i], err = a.appended(p); err != nil {
			return nil, fmt.Errorf("entry %d: %w", i+1, err)
		}
		if i == len(entries)/2 {
			failpoint.Hit("append-midway") // inside the transaction: bbolt must drop it whole
		}
	}
	if err := a.finish(); err != nil {
		return nil, err
	}
	return out, leaveOpen(tx, open, closed, o.Now)
}

// leaveOpen writes down the open session as a transaction leaves it: open, last active
// at now; or none, after a session boundary (closed); or as it was (neither).
func leaveOpen(tx *bolt.Tx, open *openSession, closed bool, now time.Time) error {
	meta := tx.Bucket(bucketMeta)
	switch {
	case open != nil:
		open.Last = now
		return putJSON(meta, keyOpenSession, open)
	case closed:
		return meta.Delete(keyOpenSession)
	}
	return nil
}

// currentSession is the open session, or a new one if it was idle for idleGap or fresh
// is set.
func currentSession(tx *bolt.Tx, idleGap time.Duration, now time.Time, fresh bool) *openSession {
	var s openSession
	if !fresh && getJSON(tx.Bucket(bucketMeta), keyOpenSession, &s) && s.ID != "" && now.Sub(s.Last) < idleGap {
		return &s
	}
	return &openSession{ID: memory.NewID(now)}
}

// appendFill is how full append-mostly buckets fill a page before splitting it.
const appendFill = 0.95

// sessionUpdates are the sessions a transaction changes, read once and written once
// at its end rather than once per entry; or what a staging adds to each session, kept
// until its last transaction adds it to what the session holds then.
type sessionUpdates map[string]*SessionInfo

// get is session id as u changes it, read from tx the first time; tx nil starts from
// nothing, as a staging's additions do.
func (u sessionUpdates) get(tx *bolt.Tx, id string) *SessionInfo {
	s, ok := u[id]
	if !ok {
		s = &SessionInfo{ID: id}
		if tx != nil {
			getSession(tx.Bucket(bucketSessions), id, s)
		}
		if s.PendingByType == nil {
			s.PendingByType = map[memory.Type]int{}
		}
		u[id] = s
	}
	return s
}

// pendingValue is what the pending set holds for an entry: its kind, and an
// observation's memory type, as count adds them to its session's figures, so that a
// flush counts its batches without decoding their entries. It decoded them under the
// lock every record waits for: 79 ms of its 100 ms hold, for 10,000 entries. Entries
// pending from before hold nothing; a flush decodes those.
func pendingValue(h head) []byte {
	switch {
	case h.event == "Stop" || h.event == "SessionEnd":
		return []byte{tagEnding}
	case h.event != "":
		return []byte{tagEvent}
	case h.noResult:
		return append(binary.BigEndian.AppendUint64([]byte{tagNoResult}, uint64(h.at.UnixNano())), h.memoryType...)
	}
	return append([]byte{tagObservation}, h.memoryType...)
}

// count adds an entry to the session's figures.
func (s *SessionInfo) count(h head) {
	if s.First.IsZero() || h.at.Before(s.First) {
		s.First = h.at
	}
	if h.at.After(s.Last) {
		s.Last = h.at
	}
	if h.event == "" {
		s.Observations++
		s.Pending++
		s.PendingByType[h.memoryType]++
	} else {
		s.Events++
		s.PendingEvents++
	}
	if s.Source == "" {
		s.Source = h.source
	}
}

// uncount takes out of the session's figures an entry count added: a staged entry
// found recorded elsewhere meanwhile. Its times stay: a duplicate's are the kept
// entry's.
func (s *SessionInfo) uncount(h head) {
	if h.event == "" {
		s.Observations--
		s.Pending--
		if s.PendingByType[h.memoryType]--; s.PendingByType[h.memoryType] <= 0 {
			delete(s.PendingByType, h.memoryType)
		}
	} else {
		s.Events--
		s.PendingEvents--
	}
}

// add adds to the session's figures those of more, a staging's additions to it.
func (s *SessionInfo) add(more *SessionInfo) {
	if !more.First.IsZero() && (s.First.IsZero() || more.First.Before(s.First)) {
		s.First = more.First
	}
	if more.Last.After(s.Last) {
		s.Last = more.Last
	}
	s.Observations += more.Observations
	s.Events += more.Events
	s.Pending += more.Pending
	s.PendingEvents += more.PendingEvents
	for t, n := range more.PendingByType {
		if s.PendingByType[t] += n; s.PendingByType[t] <= 0 {
			delete(s.PendingByType, t)
		}
	}
	if s.Source == "" {
		s.Source = more.Source
	}
}

func (u sessionUpdates) write(tx *bolt.Tx) error {
	for id, s := range u {
		if err := putSession(tx.Bucket(bucketSessions), id, s); err != nil {
			return err
		}
	}
	return nil
}

// appendTx is one transaction's appends. The index keys get put in key order at its
// end: bbolt keeps a transaction's nodes in memory until it commits, and keys put out
// of order into one node move all the keys after them, which made a 100,000-line
// --jsonl quadratic.
//
// A plain append looks earlier entries up in the visible indexes and puts its keys
// there. A staging's part looks them up in what the staging stored before too, and puts
// its keys into the staging's own indexes (see Staging).
type appendTx struct {
	tx       *bolt.Tx
	entries  *bolt.Bucket
	visible  indexes
	into     indexes  // where this transaction's keys go: visible, or the staging's own
	staging  *Staging // nil for a plain append
	sessions sessionUpdates
	read     *bolt.Tx          // where sessions are read from: tx, or nil for a staging's additions
	ids      map[string][]byte // ids this transaction recorded -> the entry's key
	calls    map[string]string // session\0tool_use_id -> id, recorded by this transaction
	puts     map[string][]put  // index bucket name -> puts, made at the end in key order
	unputs   map[string]bool   // bucket name \0 key: puts not to make after all (unput)
}

type put struct{ k, v []byte }

// newAppendTx begins appending, n entries or so: a plain append, or a part of staging s.
func newAppendTx(tx *bolt.Tx, s *Staging, n int) *appendTx {
	a := &appendTx{tx: tx, entries: tx.Bucket(bucketEntries), visible: visibleIndexes(tx), staging: s,
		sessions: sessionUpdates{}, read: tx,
		ids: make(map[string][]byte, n), calls: make(map[string]string, n), puts: map[string][]put{}}
	a.into = a.visible
	if s != nil {
		a.sessions, a.read = s.sessions, nil
	}
	// Sized once: a large append's index keys are much of what its transaction holds,
	// and nearly every entry is a call.
	for _, b := range indexBuckets {
		a.puts[string(b)] = make([]put, 0, n)
	}
	return a
}

// where an earlier entry of the same id or call was found.
type where int

const (
	nowhere   where = iota
	inThisTx        // recorded by this transaction: its keys are still to be put
	inStaging       // stored by an earlier part of this staging, in its own indexes
	inVisible       // in the visible indexes
)

// lookup finds key in the index of: what this staging stored before, then the visible
// indexes.
func (a *appendTx) lookup(of func(indexes) index, key []byte) ([]byte, where) {
	if a.staging != nil {
		if v := of(a.into).Get(key); v != nil {
			return v, inStaging
		}
	}
	if v := of(a.visible).Get(key); v != nil {
		return v, inVisible
	}
	return nil, nowhere
}

func idsOf(xs indexes) index     { return xs.ids }
func callsOf(xs indexes) index   { return xs.calls }
func pendingOf(xs indexes) index { return xs.pending }

// entry stores p, encoded, or, if it was recorded before, returns the id of the entry
// kept: p itself, in the earlier entry's place, when that was a call reported before
// its result and p is not (answered).
func (a *appendTx) entry(p Prepared) (kept string, answered bool, err error) {
	h := p.head
	if h.id == "" {
		return "", false, errors.New("the entry has no id")
	}
	var callKey []byte
	if h.toolUseID != "" {
		callKey = sessionKey(h.session, []byte(h.toolUseID))
	}
	kept, err = a.recorded(h.id, callKey)
	if kept != "" && err == nil && !h.noResult && h.event == "" {
		answered, err = a.answer(kept, &p)
	}
	if kept != "" || err != nil {
		if p.seq != 0 && err == nil { // stored, and no index will name it
			err = a.entries.Delete(seqKey(p.seq))
		}
		return kept, answered, err
	}
	seq, err := a.store(&p)
	if err != nil {
		return "", false, err
	}
	k := seqKey(seq)
	a.ids[h.id] = k
	a.later(bucketIDs, []byte(h.id), k)
	a.later(bucketTimeline, timelineKey(h.session, h.at, seq), nil)
	a.later(bucketPending, sessionKey(h.session, k), pendingValue(h))
	if callKey != nil {
		a.calls[string(callKey)] = h.id
		a.later(bucketCalls, callKey, k)
	}
	a.sessions.get(a.read, h.session).count(h)
	return "", false, nil
}

// appended records p, encoded, and says what became of it.
func (a *appendTx) appended(p Prepared) (Appended, error) {
	kept, answered, err := a.entry(p)
	switch {
	case err != nil:
		return Appended{}, err
	case kept != "":
		return Appended{ID: kept, Duplicate: !answered}, nil
	}
	return Appended{ID: p.head.id}, nil
}

// store stores p's entry, unless it is stored already, and returns its sequence.
func (a *appendTx) store(p *Prepared) (uint64, error) {
	if p.seq != 0 {
		return p.seq, nil
	}
	seq, err := a.entries.NextSequence()
	if err == nil {
		err = a.entries.Put(seqKey(seq), p.value)
	}
	if err != nil {
		return 0, err
	}
	p.seq, p.value = seq, nil
	return seq, nil
}

// answer puts p in the place of the entry id, if that is a call reported before its
// result, still pending, and says whether it did: the call keeps its id, its place in
// the timeline and its time (when it began), and, when p says nothing of how long it
// took, takes the time between the two as its duration. A call committed before its
// result came stays as it was: history is not rewritten (the flush holds such calls
// back for a while, see PrepareBatches).
//
// A staging's part leaves a visible call as it is until its last transaction: it
// stores p and notes it as an answer to make then, and says it answered.
func (a *appendTx) answer(id string, p *Prepared) (bool, error) {
	k, at := a.ids[id], inThisTx
	if k == nil {
		k, at = a.lookup(idsOf, []byte(id))
	}
	if k == nil {
		return false, nil
	}
	earlier, err := decodeEntry(a.entries.Get(k))
	if err != nil {
		return false, fmt.Errorf("decode entry %d, recorded for the same call: %w", seqOf(k), err)
	}
	before := earlier.Observation
	if before == nil || !before.NoResult {
		return false, nil
	}
	pendingKey := sessionKey(before.SessionID, k)
	if at != inThisTx {
		if x, _ := a.lookup(pendingOf, pendingKey); x == nil {
			return false, nil
		}
	}
	if at == inVisible && a.staging != nil {
		seq, err := a.store(p)
		if err != nil {
			return false, err
		}
		p.seq = 0 // stays stored, for the last transaction: not a duplicate's to drop
		return true, a.staging.deferAnswer(a.tx, seq, id)
	}
	value := p.value
	if value == nil { // stored
		value = a.entries.Get(seqKey(p.seq))
	}
	raw, err := entryJSON(value)
	if err != nil {
		return false, err
	}
	now, err := entryFrom(raw)
	if err != nil || now.Observation == nil {
		return false, err
	}
	o := now.Observation
	if o.DurationMS == nil {
		if d := o.Timestamp.Sub(before.Timestamp).Milliseconds(); d >= 0 {
			o.DurationMS = &d
		}
	}
	o.ID, o.SessionID, o.Timestamp, o.ToolUseID = before.ID, before.SessionID, before.Timestamp, before.ToolUseID
	stored, err := encodeEntry(now)
	if err != nil {
		return false, err
	}
	// The answer goes under a new sequence number, and every index moves to it: what
	// reads the journal by sequence (the search index) reads the call again, answered.
	seq, err := a.entries.NextSequence()
	if err != nil {
		return false, err
	}
	nk := seqKey(seq)
	if err := a.entries.Delete(k); err != nil {
		return false, err
	}
	if err := a.entries.Put(nk, stored); err != nil {
		return false, err
	}
	h := headOf(now)
	old := []struct{ bucket, key []byte }{{bucketPending, pendingKey}, {bucketTimeline, timelineKey(h.session, h.at, seqOf(k))}}
	if at != inThisTx {
		// Put again below, under the new sequence: taken out first wherever they are, so
		// that no part holds the old value when a merge copies it.
		old = append(old, struct{ bucket, key []byte }{bucketIDs, []byte(id)})
		if h.toolUseID != "" {
			old = append(old, struct{ bucket, key []byte }{bucketCalls, sessionKey(h.session, []byte(h.toolUseID))})
		}
	}
	for _, o := range old {
		if err := a.unput(o.bucket, o.key, at); err != nil {
			return false, err
		}
	}
	a.ids[id] = nk
	a.later(bucketIDs, []byte(id), nk)
	a.later(bucketTimeline, timelineKey(h.session, h.at, seq), nil)
	a.later(bucketPending, sessionKey(h.session, nk), pendingValue(h))
	if h.toolUseID != "" {
		a.later(bucketCalls, sessionKey(h.session, []byte(h.toolUseID)), nk)
	}
	if h.memoryType != before.MemoryType {
		s := a.sessions.get(a.read, before.SessionID)
		if s.PendingByType[before.MemoryType]--; s.PendingByType[before.MemoryType] <= 0 {
			delete(s.PendingByType, before.MemoryType)
		}
		s.PendingByType[h.memoryType]++
	}
	return true, nil
}

// unput takes key out of an index: out of the puts this transaction is to make, when it
// made the entry, else out of the index the entry was found in.
func (a *appendTx) unput(bucket, key []byte, at where) error {
	switch at {
	case inThisTx:
		if a.unputs == nil {
			a.unputs = map[string]bool{}
		}
		a.unputs[string(bucket)+"\x00"+string(key)] = true
		return nil
	case inStaging:
		return a.into.byName(bucket).Delete(key)
	}
	return a.visible.byName(bucket).Delete(key)
}

// recorded returns the id of the entry kept if an entry was recorded before with this
// id, or, for a call, with this session and tool_use_id (callKey, nil for no call).
func (a *appendTx) recorded(id string, callKey []byte) (kept string, err error) {
	if a.ids[id] != nil {
		return id, nil
	}
	if _, at := a.lookup(idsOf, []byte(id)); at != nowhere {
		return id, nil
	}
	if callKey == nil {
		return "", nil
	}
	if earlier, ok := a.calls[string(callKey)]; ok {
		return earlier, nil
	}
	if seq, _ := a.lookup(callsOf, callKey); seq != nil {
		return a.idAt(seq)
	}
	return "", nil
}

// idAt is the id of the entry stored under seq.
func (a *appendTx) idAt(seq []byte) (string, error) {
	earlier, err := decodeEntry(a.entries.Get(seq))
	if err != nil {
		return "", fmt.Errorf("decode entry %d, recorded for the same call: %w", seqOf(seq), err)
	}
	return earlier.ID(), nil
}

func (a *appendTx) later(bucket []byte, k, v []byte) {
	a.puts[string(bucket)] = append(a.puts[string(bucket)], put{k, v})
}

// finish makes the index puts, each bucket's in key order, and writes the sessions,
// but a staging's additions, which wait for its last transaction.
func (a *appendTx) finish() error {
	// bbolt copies each key it is given, and holds the copies until the transaction
	// commits: what is done with is let go first, for a large append's sake.
	a.ids, a.calls = nil, nil
	for name, puts := range a.puts {
		x := a.into.byName([]byte(name))
		// Ids and times grow: most keys land at the end of their bucket, or of their
		// session's part of it, where half-full pages would stay half empty.
		x.main.FillPercent = appendFill
		// Stable: of two puts of one key (a call answered in the transaction that recorded
		// it) the later wins.
		slices.SortStableFunc(puts, func(x, y put) int { return bytes.Compare(x.k, y.k) })
		for _, p := range puts {
			if a.unputs != nil && a.unputs[name+"\x00"+string(p.k)] {
				continue
			}
			if err := x.Put(p.k, p.v); err != nil {
				return err
			}
		}
		delete(a.puts, name)
	}
	if a.staging != nil {
		return nil
	}
	return a.sessions.write(a.tx)
}

func updateSession(tx *bolt.Tx, id string, change func(*SessionInfo)) error {
	b := tx.Bucket(bucketSessions)
	s := SessionInfo{ID: id}
	getSession(b, id, &s)
	if s.PendingByType == nil {
		s.PendingByType = map[memory.Type]int{}
	}
	change(&s)
	for t, n := range s.PendingByType {
		if n <= 0 {
			delete(s.PendingByType, t)
		}
	}
	return putSession(b, id, &s)
}

func getJSON(b *bolt.Bucket, k []byte, v any) bool {
	raw := b.Get(k)
	return raw != nil && json.Unmarshal(raw, v) == nil
}

func putJSON(b *bolt.Bucket, k []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put(k, raw)
}
