package config

// LLM is the [llm] section: how flush asks a language model for commit messages.
type LLM struct{}

func defaultLLM() LLM { return LLM{} }

// llmKeys are the [llm] section's settings.
var llmKeys = []key{}
