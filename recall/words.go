package recall

import (
	"sync/atomic"

	"github.com/agmem/agmem/internal/fulltext"
)

// segmentWords gathers the words of the segment an update writes on a goroutine of its
// own, in the order given: cutting an entry's text into words costs about what its row
// costs SQLite, and the two then take a core each (an update after a flush of 1,000
// waited for both in turn).
type segmentWords struct {
	ops      chan wordsOp
	done     chan struct{}
	b        *fulltext.Builder // the goroutine's until done
	bytes    atomic.Int64      // b.Bytes(), as of the last document gathered
	panicked any               // what the goroutine panicked with, for finish to raise
}

// wordsOp is a document to add, or a name to give doc.ID.
type wordsOp struct {
	doc    fulltext.Doc
	isName bool
	name   uint64
}

func newSegmentWords() *segmentWords {
	s := &segmentWords{ops: make(chan wordsOp, 256), done: make(chan struct{}), b: fulltext.NewBuilder(fields, keys)}
	go s.gather()
	return s
}

func (s *segmentWords) gather() {
	defer close(s.done)
	defer func() {
		// Raised in the writer's goroutine instead (finish), where a panic was raised
		// before the words had a goroutine, and cli.Main and net/http recover it: one
		// unrecovered would end the process with exit 2, which an agent reads as
		// "block". What is still sent is taken and dropped meanwhile.
		if s.panicked = recover(); s.panicked != nil {
			for range s.ops {
			}
		}
	}()
	for op := range s.ops {
		if op.isName {
			s.b.Name(op.name, op.doc.ID)
			continue
		}
		s.b.Add(op.doc)
		s.bytes.Store(int64(s.b.Bytes()))
	}
}

// add adds a document (fulltext.Builder.Add).
func (s *segmentWords) add(d fulltext.Doc) { s.ops <- wordsOp{doc: d} }

// name names id (fulltext.Builder.Name).
func (s *segmentWords) name(name uint64, id int64) {
	s.ops <- wordsOp{doc: fulltext.Doc{ID: id}, isName: true, name: name}
}

// about is about how many bytes of memory the words take (fulltext.Builder.Bytes), a
// few hundred documents behind.
func (s *segmentWords) about() int { return int(s.bytes.Load()) }

// finish waits for what was given to be gathered, and ends the goroutine: the builder
// is the caller's. A panic of the goroutine's is raised here.
func (s *segmentWords) finish() *fulltext.Builder {
	close(s.ops)
	<-s.done
	if s.panicked != nil {
		panic(s.panicked)
	}
	return s.b
}
