// Package journal owns .agmem/journal.db, the bbolt file that is the truth of what agmem
// has recorded, what is still pending, and which flush batches are under way.
//
// Invariants:
//   - No process keeps the journal open. Every call takes the journal lock, opens the
//     file, runs one transaction, closes it and releases the lock; so any number of
//     record, flush and other agmem processes share it, and none holds it across git work.
//     A call that writes first adds, a transaction each, what appends kept aside while
//     the lock was held (spool.go).
//   - A large append may store its entries in parts first (Staging), their index keys
//     in indexes of its own that no reader looks at, until one last transaction makes
//     them a part of the indexes, which every reader sees (index.go). An entry is
//     indexed once, in the indexes or in one part.
//   - An entry, once appended, is never changed. It counts as pending (in status and
//     sessions) until the batch holding it is marked committed.
//   - A batch intent (the entries of one future commit and the branch tip it was planned
//     on) is written before any git object of its commit. Entries leave the pending set
//     in the same transaction that writes the intent, so an entry belongs to the pending
//     set or to exactly one batch, never both.
//   - The journal knows nothing of git: commit ids are opaque strings to it.
package journal
