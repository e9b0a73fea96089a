// Package maintain owns a memory repo as a whole: making one (Init: a git repository,
// .agmem/ with an empty journal, a committed .gitignore that keeps .agmem/ out), checking
// and repairing it (Check and Repair, `agmem verify`), and keeping it small (GC: the
// journal forgets what git holds, and git's objects are packed).
//
// Check (`agmem verify`) cross-checks what the journal says was recorded and committed
// against what the memory repo's branch, HEAD and worktree hold; Repair repairs what can
// be repaired without losing anything. What Check checks:
//   - the branch's agmem commits (those with an Agmem-Batch trailer): each batch in one
//     commit, each entry in one batch, each commit's Agmem-Observations and Agmem-Events
//     trailers equal to what its session record holds;
//   - the journal file itself (journal.Check): a damaged journal is reported, and not
//     compared with git nor repaired;
//   - the journal against the branch: every entry the journal counts as committed is in
//     a commit reachable from the branch (a branch moved back by hand loses some; one
//     checked out instead of it holds others), no pending entry is committed already,
//     and every unfinished batch is listed;
//   - HEAD: every session record and rendered file the branch's commits wrote is there,
//     and nothing under current/ or sessions/ is there that no record explains;
//   - the worktree: every such file of HEAD is there, as HEAD has it.
//
// Sessions gc forgot are absent from the journal by design; git alone holds them, and
// Check checks them on the git side only.
//
// Promises: the journal is read in one transaction and closed before any git work; the
// check runs under the writer lock (flush.Lock), so it never sees a flush half done.
// Repair never deletes recorded data and never overwrites a file in the worktree: a
// file edited by hand is reported, not restored.
package maintain
