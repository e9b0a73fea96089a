package config

import (
	"errors"
	"time"
)

// Daemon is the [daemon] section: when `agmem daemon` flushes, what it follows, and how
// much it logs.
type Daemon struct {
	// Interval is how long the daemon waits between flushes; a flush triggered by
	// MaxPending starts the wait again.
	Interval time.Duration
	// MaxPending flushes as soon as this many observations are pending.
	MaxPending int
	// Watch are JSONL files whose lines the daemon records as they are appended; a
	// relative path is taken from the memory repo's root.
	Watch []string
	// LogMaxBytes is the size past which .agmem/daemon.log is moved to daemon.log.1.
	LogMaxBytes int
	// StopTimeout bounds how long `agmem daemon stop` waits for the final flush.
	StopTimeout time.Duration
}

func defaultDaemon() Daemon {
	return Daemon{Interval: 5 * time.Minute, MaxPending: 50, Watch: []string{},
		LogMaxBytes: 10 << 20, StopTimeout: 30 * time.Second}
}

// daemonKeys are the [daemon] section's settings; `agmem daemon run` flags win over them.
var daemonKeys = []key{
	durationKey("daemon.interval", func(c *Config) *time.Duration { return &c.Daemon.Interval }),
	intKey("daemon.max_pending", 1, func(c *Config) *int { return &c.Daemon.MaxPending }),
	listKey("daemon.watch", "paths of JSONL files", func(c *Config) *[]string { return &c.Daemon.Watch }, checkPath),
	intKey("daemon.log_max_bytes", 4096, func(c *Config) *int { return &c.Daemon.LogMaxBytes }),
	durationKey("daemon.stop_timeout", func(c *Config) *time.Duration { return &c.Daemon.StopTimeout }),
}

func checkPath(s string) error {
	if s == "" {
		return errors.New("must not be empty")
	}
	return checkOneLine(s)
}
