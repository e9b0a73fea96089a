// Package kept owns the kept file, .agmem/start-blocks.json: the context blocks the
// search index keeps beside it for the context hook, and whether one is still what the
// index would say. The index (package recall) makes the blocks and writes the file; the
// hook (package sessionstart, in agmem-record, which links no git and no SQLite) reads
// it, so that a session's start waits for a process that starts like a recording hook.
package kept

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
// no block made before, kept in an index or in the kept file, is given again. 2: no
// format character (a zero width, a tag character) passed on (hint.OneLine), and a line
// cut to the block's bound cites only what it still names; an edit that failed is not
// told as a file edited; files of one name are told apart by their paths' ends. 3:
// the head says the times are UTC, and a file named relative is one with its absolute
// name (the blocks of 2 were made by no agmem released).
const Form = 3

// IdleBound bounds the idle events (IdleAfter) a context leaves for the next update of
// the index: past that many, the index takes them in first, or, when the hook gives a
// kept block, in the background (Found.Behind).
const IdleBound = 8

// lookAhead bounds the entries recorded since the kept file was written that Lookup
// reads for idle events: the hook never waits for an update of the index.
const lookAhead = 64

// Block is a context block and what it cites.
type Block struct {
	Project  string   `json:"project"`
	Text     string   `json:"context"`
	Sessions []string `json:"sessions"` // the sessions it tells of
	Cited    []string `json:"cited"`    // the ids of the entries it names
}

// Item is a block as the kept file holds it: of a project, in a bound.
type Item struct {
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
	Blocks []Item `json:"blocks"`
}

// FileName is the kept file's name in a memory repo's state directory.
const FileName = "start-blocks.json"

// Read reads the kept file in a memory repo's state directory; one of another form is
// none.
func Read(stateDir string) (File, error) {
	data, err := os.ReadFile(filepath.Join(stateDir, FileName))
	if err != nil {
		return File{}, err
	}
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		return File{}, err
	}
	if f.Form != Form {
		return File{}, errors.New("a kept file of another form")
	}
	return f, nil
}

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

// Holds says whether f holds a block of project in maxChars characters.
func (f File) Holds(project string, maxChars int) bool { return f.at(project, maxChars) >= 0 }

func (f File) at(project string, maxChars int) int {
	return slices.IndexFunc(f.Blocks, func(it Item) bool { return it.Block.Project == project && it.MaxChars == maxChars })
}

// Found is a block Lookup found still right. Behind says the index is behind the
// journal by more idle events than a context leaves for the next update: start one in
// the background.
type Found struct {
	Block  Block
	Behind bool
}

// Lookup is the block of project in maxChars characters that the kept file holds, when
// it is still what the index would say: the journal holds nothing new since but idle
// events, and git's refs are as they were. ok is false otherwise, or when the file does
// not hold project: only the index can tell.
func Lookup(repo memrepo.Repo, project string, maxChars int) (found Found, ok bool) {
	f, err := Read(repo.StateDir())
	if err != nil {
		return Found{}, false
	}
	i := f.at(project, maxChars)
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

// Did is the set of the sessions ids, for File.Did: each one's 64-bit hash, in order. A
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
