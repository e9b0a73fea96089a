package config

// Flush is the [flush] section: how big a commit a flush writes.
type Flush struct {
	// MaxBatch bounds the entries of one batch, so one commit: a session with more
	// pending becomes several commits, in order, and a flush holds at most one round of
	// them in memory.
	MaxBatch int
}

// DefaultMaxBatch is [flush] max_batch's default.
const DefaultMaxBatch = 10000

// flushKeys are the [flush] section's settings.
var flushKeys = []key{
	intKey("flush.max_batch", 1, func(c *Config) *int { return &c.Flush.MaxBatch }),
}
