// Package priority makes this process background work: a flush, or the daemon that
// flushes, lowers its CPU priority, so that the hooks an agent runs meanwhile (each an
// agmem-record process on the agent's path) are scheduled first. The work itself is the
// same; under contention it just takes longer.
package priority

// Nice is the CPU priority background work takes: 10, as nice(1) gives by default.
const Nice = 10

// Yield lowers this process's CPU priority to Nice. It is best effort: where it cannot,
// the process goes on at the priority it has.
func Yield() { yield() }
