package config

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// Sync is the [sync] section: the remote that agmem push and pull use, how they
// authenticate, and what agmem gc keeps. Its zero value is the defaults: a field left
// empty means the default its method gives.
type Sync struct {
	// Remote is the git remote push and pull use without one named; "" is origin.
	Remote string
	// Push makes the daemon push to Remote after each flush that committed something.
	Push bool
	// Username and Password authenticate over http(s); a token goes in Password. Empty:
	// a git credential helper is asked when the server wants credentials.
	Username, Password string
	// SSHKey is a private key file for ssh remotes; "" uses the ssh agent.
	SSHKey string
	// Timeout bounds one push or pull; 0 is DefaultSyncTimeout.
	Timeout time.Duration
	// Keep is how long agmem gc keeps committed entries in the journal; 0 is DefaultKeep.
	Keep time.Duration
}

const (
	// DefaultKeep is how long the journal keeps what is committed: a week.
	DefaultKeep = 7 * 24 * time.Hour
	// DefaultSyncTimeout bounds a push or pull: well under the two minutes a flush waits
	// for the writer lock they hold.
	DefaultSyncTimeout = time.Minute
)

// RemoteName is the remote push and pull use when none is named.
func (s Sync) RemoteName() string {
	if s.Remote == "" {
		return "origin"
	}
	return s.Remote
}

// KeepFor is how long gc keeps committed entries.
func (s Sync) KeepFor() time.Duration {
	if s.Keep == 0 {
		return DefaultKeep
	}
	return s.Keep
}

// TimeoutOr is the bound on one push or pull.
func (s Sync) TimeoutOr() time.Duration {
	if s.Timeout == 0 {
		return DefaultSyncTimeout
	}
	return s.Timeout
}

// syncKeys are the [sync] section's settings.
var syncKeys = []key{
	showing(stringKey("sync.remote", func(c *Config) *string { return &c.Sync.Remote }, CheckRemoteName),
		func(c *Config) any { return c.Sync.RemoteName() }),
	boolKey("sync.push", func(c *Config) *bool { return &c.Sync.Push }),
	stringKey("sync.username", func(c *Config) *string { return &c.Sync.Username }, checkOneLine),
	secret(stringKey("sync.password", func(c *Config) *string { return &c.Sync.Password }, checkOneLine)),
	stringKey("sync.ssh_key", func(c *Config) *string { return &c.Sync.SSHKey }, checkOneLine),
	showing(durationKey("sync.timeout", func(c *Config) *time.Duration { return &c.Sync.Timeout }),
		func(c *Config) any { return c.Sync.TimeoutOr().String() }),
	showing(keepKey("sync.keep", func(c *Config) *time.Duration { return &c.Sync.Keep }),
		func(c *Config) any { return FormatKeep(c.Sync.KeepFor()) }),
}

// showing makes agmem config show a key's effective value: a default left empty shows
// as what it stands for.
func showing(k key, value func(*Config) any) key {
	k.value = value
	return k
}

// CheckRemoteName refuses what cannot name a git remote: empty, a flag, a URL or a
// path of Windows (':', '\\'), white space.
func CheckRemoteName(s string) error {
	if s == "" || strings.HasPrefix(s, "-") || strings.ContainsAny(s, " \t:\\") {
		return errors.New(`must be the name of a git remote, such as "origin"`)
	}
	return checkOneLine(s)
}

// keepKey is a duration that may also be given in days: "7d", "36h".
func keepKey(name string, field func(*Config) *time.Duration) key {
	return textKey(name, field, ParseKeep, func(d time.Duration) any { return FormatKeep(d) })
}

// ParseKeep reads how long to keep something: a whole number of days ("7d") or a Go
// duration ("36h", "90m"), positive either way.
func ParseKeep(s string) (time.Duration, error) {
	bad := errors.New(`must be a positive duration such as "7d" or "36h"`)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 || n > 100*365 {
			return 0, bad
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, bad
	}
	return d, nil
}

// FormatKeep writes d as ParseKeep reads it, in days when it is whole days.
func FormatKeep(d time.Duration) string {
	if d > 0 && d%(24*time.Hour) == 0 {
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	}
	return d.String()
}
