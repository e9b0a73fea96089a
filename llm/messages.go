package llm

import (
	"errors"
	"fmt"
	"time"

	"github.com/agmem/agmem/memory"
)

// Settings say whether and how to ask a model for commit messages.
type Settings struct {
	// APIKey is sent to BaseURL; without one, Write asks nothing and starts nothing.
	APIKey  string
	BaseURL string
	Model   string
	// Budget is the time all of a flush's requests get together, retries included.
	Budget time.Duration
	// Deadline, when set, is when that budget ends: a flush that writes its messages a
	// round at a time sets it once, before the first.
	Deadline time.Time
}

// Message is a commit message a model wrote, cleaned by Clean.
type Message struct {
	Subject string // "" when the model wrote none: the caller keeps its own
	Body    string
	Model   string // the model that wrote it; "" when it wrote nothing usable
}

// Fallback is why some commits kept agmem's template message: one error for a whole
// flush, however many commits it has.
type Fallback struct {
	Template, Asked int // commits that kept the template, of those asked for
	Err             error
	Hint            string
}

func (f *Fallback) Error() string {
	return fmt.Sprintf("LLM commit messages: the template wrote %d of %d: %v", f.Template, f.Asked, f.Err)
}

func (f *Fallback) Unwrap() error { return f.Err }

// errNothingUsable is why a commit whose model's answer Clean left empty kept the template.
var errNothingUsable = errors.New("the model's answer held no usable commit message")

// Write asks the model for the message of each commit, described by its observations,
// all within one budget. A commit with no observations is not asked for. Where there
// is no usable answer, the Message is zero and the caller keeps its template; the
// error, a *Fallback, then says why, once for all of them.
func (s Settings) Write(commits [][]memory.Observation) ([]Message, error) {
	messages := make([]Message, len(commits))
	if s.APIKey == "" {
		return messages, nil
	}
	var prompts []Prompt
	var asked []int // the index in commits of each prompt
	for i, obs := range commits {
		if len(obs) > 0 {
			prompts = append(prompts, PromptFor(obs))
			asked = append(asked, i)
		}
	}
	if len(prompts) == 0 {
		return messages, nil
	}
	deadline := s.Deadline
	if deadline.IsZero() {
		deadline = time.Now().Add(s.Budget)
	}
	resp := s.ask(prompts, deadline)
	template := 0
	for n, answer := range resp.texts {
		subject, body := Clean(answer)
		if subject == "" && body == "" {
			template++
			continue
		}
		messages[asked[n]] = Message{Subject: subject, Body: body, Model: s.Model}
	}
	if template == 0 {
		return messages, nil
	}
	var reason error = errNothingUsable
	if resp.failure != nil {
		reason = resp.failure
	}
	return messages, s.fallback(template, len(prompts), reason)
}

// fallback explains err, with a hint at what to do about it.
func (s Settings) fallback(template, asked int, err error) *Fallback {
	return &Fallback{Template: template, Asked: asked, Err: err, Hint: s.hint(err)}
}

// hint is advice on err, by the HTTP status where there is one.
func (s Settings) hint(err error) string {
	var f *Failure
	switch {
	case !errors.As(err, &f):
		return ""
	case f.TimedOut:
		return fmt.Sprintf("the budget was %s: raise [llm] timeout, or check that %s answers", s.Budget, s.BaseURL)
	case f.Status == 401 || f.Status == 403:
		return "check the API key: $OPENAI_API_KEY, $AGMEM_LLM_API_KEY or [llm] api_key"
	case f.Status == 404:
		return fmt.Sprintf("check that %s serves the model %q", s.BaseURL, s.Model)
	case f.Status == 429:
		return "the server is limiting requests; the next flush asks again"
	case f.Status == 0:
		return fmt.Sprintf("check that a server answers at %s ($OPENAI_BASE_URL or [llm] base_url)", s.BaseURL)
	}
	return ""
}
