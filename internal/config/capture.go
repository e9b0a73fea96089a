package config

import (
	"path"
	"time"

	"github.com/agmem/agmem/capture"
	"github.com/agmem/agmem/redact"
)

// captureKeys are the [capture] section: what record keeps, how large it may be, and
// how it groups sessions.
var captureKeys = []key{
	boolKey("capture.enabled", func(c *Config) *bool { return &c.Enabled }),
	listKey("capture.ignore_tools", "tool names or globs such as \"mcp__slack__*\"",
		func(c *Config) *[]string { return &c.Capture.IgnoreTools }, checkGlob),
	intKey("capture.min_result_chars", 0, func(c *Config) *int { return &c.Capture.MinResultChars }),
	listKey("capture.withhold_paths", "path globs such as \"**/.env*\"",
		func(c *Config) *[]string { return &c.Withhold }, checkGlob),
	intKey("capture.max_value_bytes", 1024, func(c *Config) *int { return &c.MaxValue }),
	intKey("capture.max_input_bytes", 1024, func(c *Config) *int { return &c.MaxInput }),
	durationKey("capture.session_idle", func(c *Config) *time.Duration { return &c.SessionIdle }),
}

func checkGlob(g string) error {
	_, err := path.Match(g, "")
	return err
}

// DefaultMaxInput bounds what record reads on stdin for one object: 64 MiB.
const DefaultMaxInput = 64 << 20

// Policy is the capture policy the configuration describes.
func (c *Config) Policy() (capture.Policy, error) {
	r := redact.Default()
	if len(c.Redact.Disable)+len(c.Redact.Allow)+len(c.Redact.Extra) > 0 {
		var err error
		if r, err = redact.New(c.Redact); err != nil {
			return capture.Policy{}, err
		}
	}
	return capture.Policy{Rules: c.Capture, Redactor: r, Withhold: c.Withhold, MaxValue: c.MaxValue}, nil
}
