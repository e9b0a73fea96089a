// Package config owns agmem's settings (FORMAT.md §Config): the built-in defaults, the memory
// repo's .agmem/config.toml, and AGMEM_<SECTION>_<KEY> environment variables, in
// rising order of precedence, each value remembered with where it came from.
//
// The file is local to the memory repo and never committed: a pulled history can never
// change how agmem behaves. An unknown key or a bad value is an error that names the key
// and where it was found.
package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/agmem/agmem/capture"
	"github.com/agmem/agmem/classify"
	"github.com/agmem/agmem/redact"
)

// FileName is the configuration file inside a memory repo's .agmem directory.
const FileName = "config.toml"

// Config is agmem's effective configuration.
type Config struct {
	Capture classify.Rules
	// Enabled false makes record capture nothing.
	Enabled bool
	// Withhold are path globs whose files' contents are never captured.
	Withhold []string
	// MaxValue bounds an argument's value, a result or an error, in bytes; MaxInput
	// bounds one object read by record.
	MaxValue, MaxInput int
	Redact             redact.Options
	// SessionIdle is how long agmem's open session may be idle before input that names
	// no session starts a new one.
	SessionIdle time.Duration
	LLM         LLM
	Daemon      Daemon
	Sync        Sync
	Context     Context
	Audit       Audit
	Flush       Flush

	origins map[string]string
}

// Setting is one key of the effective configuration, for `agmem config`.
type Setting struct {
	Key    string `json:"key"`
	Value  any    `json:"value"`
	Origin string `json:"origin"` // "default", the file's path, or the environment variable
}

// key is one setting: how to read it from TOML or from the environment, and show it.
type key struct {
	name    string // section.key, as in the file
	fromAny func(c *Config, v any) error
	fromEnv func(c *Config, s string) error
	value   func(c *Config) any
	// alsoEnv are environment variables that set the key when AGMEM_<SECTION>_<KEY> is
	// not set, such as OPENAI_API_KEY, which other tools read too.
	alsoEnv []string
}

// keys are every setting agmem reads, section by section.
var keys = slices.Concat(captureKeys, redactKeys, llmKeys, daemonKeys, syncKeys, contextKeys, auditKeys, flushKeys)

// retired are keys earlier versions read, and why none reads them now.
var retired = map[string]string{
	"llm.helper":  "agmem asks the model itself",
	"sync.helper": "agmem talks to remotes itself",
}

// Default is the built-in configuration.
func Default() *Config {
	c := &Config{Capture: classify.Default(), Enabled: true, Withhold: capture.DefaultWithhold(),
		MaxValue: capture.DefaultMaxValue, MaxInput: DefaultMaxInput,
		SessionIdle: 30 * time.Minute, LLM: defaultLLM(), Daemon: defaultDaemon(), Context: defaultContext(),
		Flush:   Flush{MaxBatch: DefaultMaxBatch},
		origins: map[string]string{}}
	for _, k := range keys {
		c.origins[k.name] = "default"
	}
	return c
}

// EnvName is the environment variable that sets a key: capture.min_result_chars is
// AGMEM_CAPTURE_MIN_RESULT_CHARS.
func EnvName(key string) string {
	return "AGMEM_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// Load reads the configuration of the memory repo whose state directory is stateDir.
// A missing file is no error.
func Load(stateDir string, getenv func(string) string) (*Config, error) {
	c := Default()
	path := filepath.Join(stateDir, FileName)
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", path, err)
	default:
		if err := c.applyFile(path, data); err != nil {
			return nil, err
		}
	}
	for _, k := range keys {
		for _, env := range append([]string{EnvName(k.name)}, k.alsoEnv...) {
			s := getenv(env)
			if s == "" {
				continue
			}
			if err := k.fromEnv(c, s); err != nil {
				return nil, fmt.Errorf("%s: %s", env, err)
			}
			c.origins[k.name] = "$" + env
			break
		}
	}
	return c, nil
}

func (c *Config) applyFile(path string, data []byte) error {
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	found := map[string]any{}
	for section, body := range doc {
		table, ok := body.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %q is not a known section", path, section)
		}
		for name, v := range table {
			found[section+"."+name] = v
		}
	}
	for _, k := range keys {
		v, ok := found[k.name]
		if !ok {
			continue
		}
		delete(found, k.name)
		if err := k.fromAny(c, v); err != nil {
			return fmt.Errorf("%s: %s %s", path, k.name, err)
		}
		c.origins[k.name] = path
	}
	if len(found) > 0 {
		var unknown []string
		for name := range found {
			unknown = append(unknown, name)
		}
		sort.Strings(unknown)
		if why, ok := retired[unknown[0]]; ok {
			return fmt.Errorf("%s: %s is no longer read (%s): remove it", path, unknown[0], why)
		}
		return fmt.Errorf("%s: unknown key %s", path, unknown[0])
	}
	return nil
}

// Settings lists every key with its effective value and origin, sorted by key.
func (c *Config) Settings() []Setting {
	var out []Setting
	for _, k := range keys {
		out = append(out, Setting{Key: k.name, Value: k.value(c), Origin: c.origins[k.name]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}
