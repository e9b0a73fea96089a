package config

import (
	"errors"
	"strconv"
	"strings"
)

// captureKeys are the [capture] section: what record keeps and how it groups sessions.
var captureKeys = []key{
	{
		name: "capture.ignore_tools",
		fromAny: func(c *Config, v any) error {
			list, ok := v.([]any)
			if !ok {
				return errors.New("must be a list of tool names")
			}
			c.Capture.IgnoreTools = c.Capture.IgnoreTools[:0:0]
			for _, item := range list {
				s, ok := item.(string)
				if !ok {
					return errors.New("must be a list of tool names")
				}
				c.Capture.IgnoreTools = append(c.Capture.IgnoreTools, s)
			}
			return nil
		},
		fromEnv: func(c *Config, s string) error {
			c.Capture.IgnoreTools = nil
			for _, t := range strings.Split(s, ",") {
				if t = strings.TrimSpace(t); t != "" {
					c.Capture.IgnoreTools = append(c.Capture.IgnoreTools, t)
				}
			}
			return nil
		},
		value: func(c *Config) any { return c.Capture.IgnoreTools },
	},
	{
		name: "capture.min_result_chars",
		fromAny: func(c *Config, v any) error {
			n, ok := v.(int64)
			if !ok || n < 0 {
				return errors.New("must be a whole number, 0 or more")
			}
			c.Capture.MinResultChars = int(n)
			return nil
		},
		fromEnv: func(c *Config, s string) error {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return errors.New("must be a whole number, 0 or more")
			}
			c.Capture.MinResultChars = n
			return nil
		},
		value: func(c *Config) any { return c.Capture.MinResultChars },
	},
	{
		name: "capture.session_idle",
		fromAny: func(c *Config, v any) error {
			s, ok := v.(string)
			if !ok {
				return errors.New(`must be a duration such as "30m"`)
			}
			return setDuration(&c.SessionIdle, s)
		},
		fromEnv: func(c *Config, s string) error { return setDuration(&c.SessionIdle, s) },
		value:   func(c *Config) any { return c.SessionIdle.String() },
	},
}
