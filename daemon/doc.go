// Package daemon owns `agmem daemon`: one long-lived process per memory repo that
// flushes on a timer and when enough observations are pending, and records the lines
// appended to JSONL files it follows.
//
// Invariants:
//   - One daemon per memory repo. It holds a kernel flock on .agmem/daemon.lock for its
//     whole life and only then writes .agmem/daemon.json, its pid and state. The lock
//     decides whether a daemon runs; the state file only says which one and how it does,
//     so a stale state file (a killed daemon, a reused pid) is harmless.
//   - The daemon keeps nothing open that another agmem process needs: it reads and
//     records through the journal's own short transactions and flushes through
//     flush.Run, which takes the flush lock. `agmem record` and `agmem flush` work
//     alongside it as they do without it.
//   - The lines read from a followed file and the offset past them are written in one
//     journal transaction: a line is recorded once, whatever moment the daemon dies at.
//   - Killed at any moment, it leaves nothing that the next start (or any flush) does
//     not finish: flush's own protocol resumes a batch it planned.
package daemon
