package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/agmem/agmem/redact"
)

// redactKeys are the [redact] section: rules switched off, secrets allowed, rules added.
var redactKeys = []key{
	listKey("redact.disable", "rule ids (\"agmem redact --rules\" lists them)",
		func(c *Config) *[]string { return &c.Redact.Disable }, checkRuleID),
	listKey("redact.allow", "regexes", func(c *Config) *[]string { return &c.Redact.Allow }, checkRegex),
	{
		name: "redact.patterns",
		fromAny: func(c *Config, v any) error {
			list, ok := v.([]any)
			if !ok {
				return errors.New(`must be a list of {id = "...", regex = "..."}`)
			}
			var ps []redact.Pattern
			for _, item := range list {
				m, _ := item.(map[string]any)
				id, _ := m["id"].(string)
				re, _ := m["regex"].(string)
				if len(m) != 2 || id == "" || re == "" {
					return errors.New(`must be a list of {id = "...", regex = "..."}`)
				}
				ps = append(ps, redact.Pattern{ID: id, Regex: re})
			}
			return setPatterns(c, ps)
		},
		fromEnv: func(c *Config, s string) error {
			var ps []redact.Pattern
			if err := json.Unmarshal([]byte(s), &ps); err != nil {
				return errors.New(`must be a JSON list of {"id": "...", "regex": "..."}`)
			}
			return setPatterns(c, ps)
		},
		value: func(c *Config) any { return c.Redact.Extra },
	},
}

func setPatterns(c *Config, ps []redact.Pattern) error {
	for _, p := range ps {
		if p.ID == "" {
			return fmt.Errorf("pattern %q has no id", p.Regex)
		}
		if err := checkRegex(p.Regex); err != nil {
			return fmt.Errorf("pattern %q: %w", p.ID, err)
		}
	}
	c.Redact.Extra = ps
	return nil
}

func checkRegex(s string) error {
	_, err := regexp.Compile(s)
	return err
}

func checkRuleID(id string) error {
	if !slices.Contains(redact.RuleIDs(), id) {
		return errors.New("is not a rule id")
	}
	return nil
}
