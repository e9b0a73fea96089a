package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// MaxAnswerTokens bounds each answer, as the Python agmem did: a commit message needs
// no more, and a model that rambles costs less.
const MaxAnswerTokens = 200

const (
	// parallel is how many requests are in flight at once: a flush of many sessions
	// gets its messages within the budget without flooding the server.
	parallel = 4
	// maxRetries is generous because the deadline, not a count, bounds the retries.
	maxRetries = 3
)

// Prompt is one chat completion to ask for: one commit's message.
type Prompt struct {
	System string
	User   string
}

// Failure is why a request got no answer.
type Failure struct {
	Message string
	// Status is the HTTP status of the server's error response, 0 if there was none.
	Status int
	// TimedOut says the budget ran out first.
	TimedOut bool
}

func (f *Failure) Error() string { return f.Message }

// replies are what the model said to each prompt, in order ("" where it said
// nothing), and the first request that failed: it ended the asking, since what fails
// one request (the key, the server, the budget) fails the others too.
type replies struct {
	texts   []string
	failure *Failure
}

// ask asks for every prompt, a few at a time, until the deadline, which ends every
// request and retry.
func (s Settings) ask(prompts []Prompt, deadline time.Time) replies {
	client := openai.NewClient(option.WithAPIKey(s.APIKey), option.WithBaseURL(s.BaseURL), option.WithMaxRetries(maxRetries))
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	out := replies{texts: make([]string, len(prompts))}
	var failOnce sync.Once
	slots := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, p := range prompts {
		wg.Go(func() {
			select {
			case slots <- struct{}{}:
				defer func() { <-slots }()
			case <-ctx.Done():
				return
			}
			answer, err := s.complete(ctx, client, deadline, p)
			if err != nil {
				failOnce.Do(func() {
					out.failure = s.failure(err)
					cancel()
				})
				return
			}
			out.texts[i] = answer
		})
	}
	wg.Wait()
	if out.failure == nil && ctx.Err() != nil {
		out.failure = s.failure(ctx.Err())
	}
	return out
}

func (s Settings) complete(ctx context.Context, client openai.Client, deadline time.Time, p Prompt) (string, error) {
	// The last attempt's failure says more than "out of time" when retries run into
	// the deadline: a server that refuses connections, or answers 503 every time.
	var lastAttempt error
	var mu sync.Mutex
	opts := []option.RequestOption{option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		res, err := next(r)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err != nil && ctx.Err() == nil:
			lastAttempt = err
		case err == nil && res.StatusCode >= 400:
			lastAttempt = fmt.Errorf("%s", res.Status)
		}
		return res, err
	})}
	if left := time.Until(deadline); left > 0 {
		// A server asking to be retried later than the budget allows gets its error
		// back at once, rather than a wait until the deadline.
		opts = append(opts, option.WithMaxRetryDelay(left))
	}
	completion, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:     openai.ChatModel(s.Model),
		Messages:  []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(p.System), openai.UserMessage(p.User)},
		MaxTokens: openai.Int(MaxAnswerTokens),
	}, opts...)
	mu.Lock()
	last := lastAttempt
	mu.Unlock()
	if errors.Is(err, context.DeadlineExceeded) && last != nil {
		return "", outOfTime{last}
	}
	if err != nil {
		return "", err
	}
	if len(completion.Choices) == 0 {
		return "", nil
	}
	answer := completion.Choices[0].Message.Content
	return answer[:min(len(answer), maxAnswerBytes)], nil
}

// failure describes err without anything the server sent but its status (a server's
// text could hold the key it was given), and without the key.
func (s Settings) failure(err error) *Failure {
	var apiErr *openai.Error
	var f *Failure
	switch {
	case errors.As(err, &apiErr):
		f = &Failure{Message: apiErr.Error(), Status: apiErr.StatusCode}
	case errors.As(err, new(outOfTime)):
		f = &Failure{Message: err.Error(), TimedOut: true}
	case errors.Is(err, context.DeadlineExceeded):
		f = &Failure{Message: "no answer within the time budget", TimedOut: true}
	default:
		f = &Failure{Message: err.Error()}
	}
	f.Message = hideKey(f.Message, s.APIKey)
	return f
}

// outOfTime is a request that retried until the deadline, with what its last attempt met.
type outOfTime struct{ last error }

func (e outOfTime) Error() string {
	return "no answer within the time budget; the last attempt: " + e.last.Error()
}

// hideKey keeps the API key out of text agmem prints, should a server have put it
// there. A key too short to be secret is left alone, or "ok" would vanish from every
// message for the key "ok".
func hideKey(text, apiKey string) string {
	if len(apiKey) < 8 {
		return text
	}
	return strings.ReplaceAll(text, apiKey, "****")
}
