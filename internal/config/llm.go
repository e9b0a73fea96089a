package config

import (
	"errors"
	"net/url"
	"strings"
	"time"
	"unicode"
)

// LLM is the [llm] section: how flush asks a language model for commit messages.
type LLM struct {
	// Enabled false keeps agmem's template message for every commit, key or not.
	Enabled bool
	// APIKey is sent to BaseURL. Without one, flush asks nothing of anyone.
	APIKey string
	// BaseURL is any OpenAI-compatible chat-completions server.
	BaseURL string
	Model   string
	// Timeout is one budget for all of a flush's requests, retries included.
	Timeout time.Duration
}

func defaultLLM() LLM {
	return LLM{Enabled: true, BaseURL: "https://api.openai.com/v1", Model: "gpt-4o-mini", Timeout: 10 * time.Second}
}

// llmKeys are the [llm] section's settings. The API key and base URL can also come from
// OPENAI_API_KEY and OPENAI_BASE_URL, which every OpenAI client reads.
var llmKeys = []key{
	boolKey("llm.enabled", func(c *Config) *bool { return &c.LLM.Enabled }),
	secret(alsoFrom("OPENAI_API_KEY", stringKey("llm.api_key", func(c *Config) *string { return &c.LLM.APIKey }, checkOneLine))),
	alsoFrom("OPENAI_BASE_URL", stringKey("llm.base_url", func(c *Config) *string { return &c.LLM.BaseURL }, checkBaseURL)),
	stringKey("llm.model", func(c *Config) *string { return &c.LLM.Model }, checkModel),
	durationKey("llm.timeout", func(c *Config) *time.Duration { return &c.LLM.Timeout }),
}

// alsoFrom lets the environment variable env set k when AGMEM_<SECTION>_<KEY> does not.
func alsoFrom(env string, k key) key {
	k.alsoEnv = append(k.alsoEnv, env)
	return k
}

// secret shows the string value of k masked: "agmem config" never prints it.
func secret(k key) key {
	show := k.value
	k.value = func(c *Config) any { return masked(show(c).(string)) }
	return k
}

func checkOneLine(s string) error {
	if strings.ContainsFunc(s, unicode.IsControl) {
		return errors.New("must be one line with no control characters")
	}
	return nil
}

func checkModel(s string) error {
	if s == "" || len(s) > 200 {
		return errors.New("must be a model name of 1 to 200 bytes")
	}
	return checkOneLine(s)
}

func checkBaseURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New(`must be an http or https URL such as "http://localhost:11434/v1"`)
	}
	return nil
}

// masked shows that a secret is set without showing it: its last four characters only
// when it is long enough that they give nothing away, as OpenAI's own dashboard does.
func masked(secret string) string {
	switch {
	case secret == "":
		return ""
	case len(secret) < 20:
		return "****"
	default:
		return "****" + secret[len(secret)-4:]
	}
}
