package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// boolKey is a setting held in a bool field.
func boolKey(name string, field func(*Config) *bool) key {
	bad := errors.New("must be true or false")
	return key{
		name: name,
		fromAny: func(c *Config, v any) error {
			b, ok := v.(bool)
			if !ok {
				return bad
			}
			*field(c) = b
			return nil
		},
		fromEnv: func(c *Config, s string) error {
			b, err := strconv.ParseBool(s)
			if err != nil {
				return bad
			}
			*field(c) = b
			return nil
		},
		value: func(c *Config) any { return *field(c) },
	}
}

// intKey is a setting held in an int field, at least least.
func intKey(name string, least int, field func(*Config) *int) key {
	bad := fmt.Errorf("must be a whole number, %d or more", least)
	return key{
		name: name,
		fromAny: func(c *Config, v any) error {
			n, ok := v.(int64)
			if !ok || n < int64(least) || int64(int(n)) != n {
				return bad
			}
			*field(c) = int(n)
			return nil
		},
		fromEnv: func(c *Config, s string) error {
			n, err := strconv.Atoi(s)
			if err != nil || n < least {
				return bad
			}
			*field(c) = n
			return nil
		},
		value: func(c *Config) any { return *field(c) },
	}
}

// most bounds an integer setting from above as well.
func (k key) most(n int) key {
	fromAny, fromEnv := k.fromAny, k.fromEnv
	check := func(c *Config, err error) error {
		if err == nil {
			if v, _ := k.value(c).(int); v > n {
				return fmt.Errorf("must be %d or less", n)
			}
		}
		return err
	}
	k.fromAny = func(c *Config, v any) error { return check(c, fromAny(c, v)) }
	k.fromEnv = func(c *Config, s string) error { return check(c, fromEnv(c, s)) }
	return k
}

// listKey is a setting held in a list of strings, each checked by check (nil: any);
// what says what the items are. In the environment the items are separated by commas.
func listKey(name, what string, field func(*Config) *[]string, check func(string) error) key {
	set := func(c *Config, items []string) error {
		for _, s := range items {
			if check != nil {
				if err := check(s); err != nil {
					return fmt.Errorf("%q: %w", s, err)
				}
			}
		}
		*field(c) = items
		return nil
	}
	return key{
		name: name,
		fromAny: func(c *Config, v any) error {
			list, ok := v.([]any)
			if !ok {
				return errors.New("must be a list of " + what)
			}
			items := []string{}
			for _, item := range list {
				s, ok := item.(string)
				if !ok {
					return errors.New("must be a list of " + what)
				}
				items = append(items, s)
			}
			return set(c, items)
		},
		fromEnv: func(c *Config, s string) error {
			items := []string{}
			for _, item := range strings.Split(s, ",") {
				if item = strings.TrimSpace(item); item != "" {
					items = append(items, item)
				}
			}
			return set(c, items)
		},
		value: func(c *Config) any { return *field(c) },
	}
}

// textKey is a setting written as a string and held parsed: parse reads it (and says
// what it must be when it cannot), show writes it back for agmem config.
func textKey[T any](name string, field func(*Config) *T, parse func(string) (T, error), show func(T) any) key {
	set := func(c *Config, s string) error {
		v, err := parse(s)
		if err != nil {
			return err
		}
		*field(c) = v
		return nil
	}
	return key{
		name: name,
		fromAny: func(c *Config, v any) error {
			s, ok := v.(string)
			if !ok {
				// What parse says of an empty value says what the setting must be.
				_, err := parse("")
				if err == nil {
					err = errors.New("must be a string")
				}
				return err
			}
			return set(c, s)
		},
		fromEnv: set,
		value:   func(c *Config) any { return show(*field(c)) },
	}
}

// stringKey is a setting held in a string field, checked by check.
func stringKey(name string, field func(*Config) *string, check func(string) error) key {
	return textKey(name, field, func(s string) (string, error) { return s, check(s) },
		func(s string) any { return s })
}

// durationKey is a setting held in a positive duration, written as "10s" or "30m".
func durationKey(name string, field func(*Config) *time.Duration) key {
	return textKey(name, field, parseDuration, func(d time.Duration) any { return d.String() })
}

func parseDuration(s string) (time.Duration, error) {
	v, err := time.ParseDuration(s)
	if err != nil || v <= 0 {
		return 0, errors.New(`must be a positive duration such as "30m"`)
	}
	return v, nil
}
