// Package vcs owns agmem's side of git: opening and initialising the memory repo,
// writing blobs, trees and commits through go-git plumbing, moving the branch with a
// compare-and-swap that git itself respects, keeping the worktree and index in step with
// the commits agmem writes, and the trailer block that carries a commit's metadata.
//
// Promises:
//   - A commit reads and writes only the trees on changed paths (each whole: a flat
//     directory of many files costs its size each time it changes), writes its objects
//     as one pack, and rewrites the index once, copying the entries it does not touch.
//   - The branch moves only from the tip a commit was built on (ErrRefMoved otherwise),
//     under git's own ref lock file, so git commands running beside agmem stay correct.
//   - No path outside the worktree is ever written.
//   - No value can add, remove or change a trailer of a message formatted here.
package vcs
