package fulltext

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPostingCodes reads back, through a segment and through a merge of it, each way a
// posting is coded: one field once, one field more than once (in indexes of fewer
// than 7 fields, and of 7, which have no code for it), and several fields.
func TestPostingCodes(t *testing.T) {
	for _, fields := range []int{1, 3, 6, MaxFields} {
		t.Run(fmt.Sprint(fields, " fields"), func(t *testing.T) {
			b := NewBuilder(fields, 0)
			var want [][]int // per document, the term's count in each field
			for d := range 300 {
				counts := make([]int, fields)
				texts := make([]string, fields)
				for f := range fields {
					switch {
					case d%3 == 0 && f == d%fields: // one field, once
						counts[f] = 1
					case d%3 == 1 && f == d%fields: // one field, up to 60 times
						counts[f] = 2 + d%59
					case d%3 == 2 && (f == 0 || f == fields-1): // several fields
						counts[f] = 1 + (d+f)%4
					}
					texts[f] = strings.Repeat("filler ", d%5) + strings.Repeat("term filler ", counts[f])
				}
				b.Add(Doc{ID: int64(d), Fields: texts})
				want = append(want, counts)
			}
			built := written(t, b)
			merged := filepath.Join(t.TempDir(), "merged")
			if _, err := Merge([]*Segment{built}, merged); err != nil {
				t.Fatal(err)
			}
			again, err := Open(merged)
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			for _, s := range []*Segment{built, again} {
				var damage error
				it := newTermIter(s, s.find("term"), &damage)
				for d, counts := range want {
					if it.doc() != uint32(d) {
						t.Fatalf("document %d: the postings are at %d", d, it.doc())
					}
					for f, n := range counts {
						if it.tf(f) != uint32(n) {
							t.Fatalf("document %d, field %d: count %d, want %d", d, f, it.tf(f), n)
						}
						var wantPos []uint32
						for i := range n {
							wantPos = append(wantPos, uint32(d%5+2*i))
						}
						if got := it.positions(f, nil); !slices.Equal(got, wantPos) {
							t.Fatalf("document %d, field %d: positions %v, want %v", d, f, got, wantPos)
						}
					}
					it.next()
				}
				if it.doc() != end || damage != nil {
					t.Fatalf("past the last document: at %d, damage %v", it.doc(), damage)
				}
			}
		})
	}
}
