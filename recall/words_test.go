package recall

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agmem/agmem/internal/fulltext"
)

// A panic while the words are gathered (the builder's, on a document it refuses) is
// raised by finish, in the writer's goroutine, not from the gathering one, which would
// end the process past any recover with exit 2 (an agent reads 2 as "block"); what is
// sent after it does not block.
func TestWordsPanicRaisedByFinish(t *testing.T) {
	s := newSegmentWords()
	s.add(fulltext.Doc{ID: 1, Fields: []string{"one field of the six"}})
	for i := range 1000 { // more than the channel holds
		s.name(uint64(i), int64(i))
	}
	defer func() {
		p := recover()
		if p == nil || !strings.Contains(fmt.Sprint(p), "fields") {
			t.Fatalf("finish raised %v, want the builder's panic", p)
		}
	}()
	s.finish()
}
