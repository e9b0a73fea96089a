package llm

import "time"

// HelperName is the executable that asks the model: cmd/agmem-llm.
const HelperName = "agmem-llm"

// MaxAnswerTokens bounds each answer, as the Python agmem did: a commit message needs
// no more, and a model that rambles costs less.
const MaxAnswerTokens = 200

// Request is what agmem writes to agmem-llm's standard input, as one JSON document. It
// holds no secret: the API key is in the helper's environment as OPENAI_API_KEY.
type Request struct {
	Model   string `json:"model"`
	BaseURL string `json:"base_url"`
	// Deadline ends every request and retry; agmem kills the helper soon after.
	Deadline time.Time `json:"deadline"`
	Prompts  []Prompt  `json:"prompts"`
}

// Prompt is one chat completion to ask for: one commit's message.
type Prompt struct {
	System string `json:"system"`
	User   string `json:"user"`
}

// Response is what agmem-llm writes to its standard output, as one JSON document.
type Response struct {
	// Answers holds the answer to each prompt, in order; "" where there is none.
	Answers []string `json:"answers"`
	// Failure is the first request that failed; it ended the asking, since what fails
	// one request (the key, the server, the budget) fails the others too.
	Failure *Failure `json:"failure,omitempty"`
}

// Failure is why a request got no answer.
type Failure struct {
	Message string `json:"message"`
	// Status is the HTTP status of the server's error response, 0 if there was none.
	Status int `json:"status,omitempty"`
	// TimedOut says the budget ran out first.
	TimedOut bool `json:"timed_out,omitempty"`
}

func (f *Failure) Error() string { return f.Message }
