// Package fulltext is agmem's full-text engine: an inverted index of documents with a
// few weighted text fields, in immutable segment files, ranked by BM25.
//
// A Builder turns documents into a segment file, written once and never changed;
// Merge writes one segment of several, leaving out the documents the caller says are
// dead. Search runs a query (Parse: words, phrases, prefixes, AND, OR, NOT) over a set
// of segments and returns the best documents, each with its score, and how many
// matched. Each document carries a caller's id, a time and a few keys (short strings
// such as an agent's name) that a search can filter on. A segment also names ids,
// documents' or not, by 64-bit names the caller gives them (Builder.Name), which
// Segment.Named finds them by.
//
// Why an engine of agmem's own, where SQLite's FTS5 served before (BENCHMARKS.md): on
// a year's memory of 1,000,000 observations FTS5, run as Go code translated from C,
// took 0.5 to 1.3 s to rank a common word, scoring every match and reading each
// match's length from a table of its own; bleve ranked faster but built 4 times slower
// into an index twice the size, and let no second process read while one wrote. Here a
// term's postings are in blocks of 128 documents, each block with the most any of its
// documents can score, so a search skips the blocks that cannot reach the best found
// so far; a segment file is mapped, not read, so a search costs the pages it touches.
//
// A segment file holds its own consistency checks (lengths, offsets, a checksum of its
// directory): a file cut short or overwritten is refused with ErrDamaged, or found so
// while searched, never a panic. The index built of segments is derived data: its
// owner makes it anew when it is damaged.
package fulltext
