// Package vcs owns agmem's side of git: opening and initialising the memory repo,
// writing blobs, trees and commits through go-git plumbing, moving the branch with a
// compare-and-swap that git itself respects, keeping the worktree and index in step with
// the commits agmem writes, and the trailer block that carries a commit's metadata.
//
// Promises:
//   - A draft reads only the trees on changed paths, each once, and writes each new
//     version of one as its sorted entries with the new ones merged in, stored as a
//     delta against the version before it in the same pack: a flat directory of many
//     files costs a copy and a hash of its bytes per commit, and one compressed copy
//     per pack. A draft's objects go in one pack; the index is rewritten once per
//     Materialize, copying the entries it does not touch.
//   - Packs are merged by copying their entries as they are (deltas included), so that
//     merging costs reading and writing the bytes; so is the pack of a whole history
//     that a first push sends (PlanWholePack), which holds only what the tip reaches.
//   - A file read back with OpenFile or EachFile is inflated as it is read, never held
//     whole, where a pack holds it whole (as agmem writes them).
//   - The branch moves only from the tip a commit was built on (ErrRefMoved otherwise),
//     under git's own ref lock file, so git commands running beside agmem stay correct.
//   - No path outside the worktree is ever written.
//   - No value can add, remove or change a trailer of a message formatted here.
package vcs
