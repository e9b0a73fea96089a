// Package sessionstart owns what an agent is given when its session starts, without
// opening the search index: the context blocks the index keeps in a file beside it
// (the kept file), whether they are still what the index would say, and the context
// hook that gives one and records it. The search index (package recall) makes the
// blocks and writes the file; agmem-record, which links no git and no SQLite, reads
// it, so that a session's start waits for a process that starts like a recording hook.
// When the file cannot answer, the hook runs "agmem context", which can.
package sessionstart

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/agmem/agmem/internal/atomicfile"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/journal"
	"github.com/agmem/agmem/memory"
)

// Form names the form of the blocks: count it up when what they say changes, so that
// no block made before, kept in an index or in the kept file, is given again.
const Form = 1

// IdleBound bounds the entries recorded since the index's last update that a context
// looks at for idle events (see IdleAfter): past that many, the index is brought up to
// date first.
const IdleBound = 8

// lookAhead bounds the entries recorded since the kept file was written that Lookup
// reads for idle events. Past IdleBound the block is still given when they are idle,
// and the index is brought up to date in the background (Found.Behind), so that the
// next start reads fewer: the hook never waits for an update.
const lookAhead = 64

// Block is a context block and what it cites.
type Block struct {
	Project  string   `json:"project"`
	Text     string   `json:"context"`
	Sessions []string `json:"sessions"` // the sessions it tells of
	Cited    []string `json:"cited"`    // the ids of the entries it names
}

// Kept is a block as the kept file holds it: of a project, in a bound.
type Kept struct {
	MaxChars int   `json:"max_chars"`
	Block    Block `json:"block"`
}

// File is the kept file: blocks that were what the index said when its journal and git
// were as File says, and the sessions that did something then.
type File struct {
	Form int `json:"form"`
	// JournalBirth and JournalSeq are the journal the index had read, up to which entry.
	JournalBirth string `json:"journal_birth"`
	JournalSeq   uint64 `json:"journal_seq"`
	// Refs is the fingerprint of git's refs (RefsOf) that the index held every tip of.
	Refs string `json:"refs"`
	// Did holds the sessions with a call or a prompt (Did), which an idle event may not
	// be of.
	Did    []byte `json:"did"`
	Blocks []Kept `json:"blocks"`
}

// FileName is the kept file's name in a memory repo's state directory.
const FileName = "start-blocks.json"

// Write writes f as the kept file in a memory repo's state directory, whole or not at
// all.
func Write(stateDir string, f File) error {
	f.Form = Form
	return atomicfile.Write(filepath.Join(stateDir, FileName), ".start-blocks-*", 0o644, func(w *bufio.Writer) error {
		return json.NewEncoder(w).Encode(f)
	})
}

// Remove removes the kept file in a memory repo's state directory, as the index it was
// made from goes.
func Remove(stateDir string) error {
	if err := os.Remove(filepath.Join(stateDir, FileName)); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// Found is a block Lookup found still right. Behind says the index is behind the
// journal by more idle events than a context leaves for the next update: start one in
// the background (IndexInBackground).
type Found struct {
	Block  Block
	Behind bool
}

// Lookup is the block of project in maxChars characters that the kept file holds, when
// it is still what the index would say: the journal holds nothing new since but idle
// events, and git's refs are as they were. ok is false otherwise, or when the file does
// not hold project: only the index can tell.
func Lookup(repo memrepo.Repo, project string, maxChars int) (found Found, ok bool) {
	data, err := os.ReadFile(filepath.Join(repo.StateDir(), FileName))
	if err != nil {
		return Found{}, false
	}
	var f File
	if json.Unmarshal(data, &f) != nil || f.Form != Form {
		return Found{}, false
	}
	i := slices.IndexFunc(f.Blocks, func(k Kept) bool { return k.Block.Project == project && k.MaxChars == maxChars })
	if i < 0 {
		return Found{}, false
	}
	if refs, err := RefsOf(repo.GitDir()); err != nil || refs != f.Refs {
		return Found{}, false
	}
	j := repo.Journal()
	birth, last, err := j.Tip()
	if err != nil || birth != f.JournalBirth || last < f.JournalSeq || last-f.JournalSeq > lookAhead {
		return Found{}, false
	}
	if last > f.JournalSeq {
		sessions, idle, err := IdleAfter(j, f.JournalSeq)
		if err != nil || !idle || slices.ContainsFunc(sessions, func(id string) bool { return didHas(f.Did, id) }) {
			return Found{}, false
		}
	}
	return Found{Block: f.Blocks[i].Block, Behind: last-f.JournalSeq > IdleBound}, true
}

// Did is the set of sessions ids, for File.Did: each one's 64-bit hash, in order. A
// session that shares its hash with one of them is taken as one: that only sends a
// context to the index.
func Did(ids []string) []byte {
	hashes := make([]uint64, len(ids))
	for i, id := range ids {
		hashes[i] = hash(id)
	}
	slices.Sort(hashes)
	out := make([]byte, 0, 8*len(hashes))
	for _, h := range slices.Compact(hashes) {
		out = binary.BigEndian.AppendUint64(out, h)
	}
	return out
}

func didHas(did []byte, id string) bool {
	h, n := hash(id), len(did)/8
	i := sort.Search(n, func(i int) bool { return binary.BigEndian.Uint64(did[8*i:]) >= h })
	return i < n && binary.BigEndian.Uint64(did[8*i:]) == h
}

func hash(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64()
}

// IdleAfter reads what the journal j recorded after entry seq, and says whether it is
// idle events only: events, none a prompt. It returns their sessions, which make them
// idle when they did nothing either (no call and no prompt before), such as a
// session's start, or what the context hook told it. A context block tells nothing of
// those, and is not made again for them.
func IdleAfter(j *journal.Journal, seq uint64) (sessions []string, idle bool, err error) {
	_, err = j.Since(seq, func(e memory.Entry) error {
		if e.Event == nil || e.Event.Name == "UserPromptSubmit" {
			return errNotIdle
		}
		if !slices.Contains(sessions, e.Session()) {
			sessions = append(sessions, e.Session())
		}
		return nil
	})
	if errors.Is(err, errNotIdle) {
		return nil, false, nil
	}
	return sessions, err == nil, err
}

var errNotIdle = errors.New("not idle")
