package config

// Context is the [context] section: what `agmem context` gives an agent at the start of
// a session.
type Context struct {
	// Enabled false makes agmem context print nothing.
	Enabled bool
	// MaxChars bounds the block, in characters.
	MaxChars int
}

func defaultContext() Context { return Context{Enabled: true, MaxChars: 6000} }

// contextKeys are the [context] section's settings. The bound is at most what Claude
// Code takes of a SessionStart hook's context, 10,000 characters.
var contextKeys = []key{
	boolKey("context.enabled", func(c *Config) *bool { return &c.Context.Enabled }),
	intKey("context.max_chars", 1000, func(c *Config) *int { return &c.Context.MaxChars }).most(10000),
}
