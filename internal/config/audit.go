package config

import (
	"cmp"
	"errors"
	"slices"
)

// Audit is the [audit] section: whether flushes sign their commits.
type Audit struct {
	// Sign is when commits are signed (sign.Mode; its package is not imported here, so
	// that the hook's binary does not carry SSH's code): one of SignModes, "" for "auto".
	Sign string
}

// SignModes are the values audit.sign takes.
var SignModes = []string{"auto", "off", "best-effort", "required"}

// auditKeys are the [audit] section's settings.
var auditKeys = []key{
	showing(stringKey("audit.sign", func(c *Config) *string { return &c.Audit.Sign }, checkSignMode),
		func(c *Config) any { return cmp.Or(c.Audit.Sign, "auto") }),
}

func checkSignMode(s string) error {
	if !slices.Contains(SignModes, s) {
		return errors.New(`must be "auto" (as git's commit.gpgSign says), "off", "best-effort" or "required"`)
	}
	return nil
}
