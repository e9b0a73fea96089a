// Command agmem-llm asks an OpenAI-compatible chat-completions server for agmem's commit
// messages. `agmem flush` runs it; people do not.
//
// It reads one llm.Request (JSON) on standard input and writes one llm.Response (JSON) on
// standard output. The API key comes from $OPENAI_API_KEY, which agmem sets: never from
// the request, nor from the command line, which ps shows to every user.
//
// It is a program of its own so that openai-go is linked here and not into agmem, whose
// `record` starts on every tool call of an agent: linking openai-go costs each start of
// a program about 2.4 ms, most of agmem record's budget.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/agmem/agmem/llm"
)

const (
	maxRequestBytes = 1 << 20
	maxAnswerBytes  = 16 << 10 // of one answer; agmem reads no more of it
	// parallel is how many requests are in flight at once: a flush of many sessions
	// gets its messages within the budget without flooding the server.
	parallel = 4
	// maxRetries is generous because the deadline, not a count, bounds the retries.
	maxRetries = 3
)

func main() {
	var req llm.Request
	if err := json.NewDecoder(io.LimitReader(os.Stdin, maxRequestBytes)).Decode(&req); err != nil {
		fmt.Fprintf(os.Stderr, "agmem-llm: read the request on standard input: %v\n", err)
		os.Exit(1)
	}
	key := os.Getenv("OPENAI_API_KEY")
	if key == "" {
		fmt.Fprintln(os.Stderr, "agmem-llm: OPENAI_API_KEY is not set")
		os.Exit(1)
	}
	client := openai.NewClient(option.WithAPIKey(key), option.WithBaseURL(req.BaseURL), option.WithMaxRetries(maxRetries))
	if err := json.NewEncoder(os.Stdout).Encode(askAll(client, req)); err != nil {
		fmt.Fprintf(os.Stderr, "agmem-llm: write the response: %v\n", err)
		os.Exit(1)
	}
}

// askAll asks for every prompt, a few at a time, until the deadline. The first failure
// ends the asking: what fails one request (the key, the server, the budget) fails the
// others too, and the flush waits for nothing more.
func askAll(client openai.Client, req llm.Request) llm.Response {
	ctx, cancel := context.WithDeadline(context.Background(), req.Deadline)
	defer cancel()
	resp := llm.Response{Answers: make([]string, len(req.Prompts))}
	var failOnce sync.Once
	slots := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, p := range req.Prompts {
		wg.Go(func() {
			select {
			case slots <- struct{}{}:
				defer func() { <-slots }()
			case <-ctx.Done():
				return
			}
			answer, err := complete(ctx, client, req, p)
			if err != nil {
				failOnce.Do(func() {
					resp.Failure = failure(err)
					cancel()
				})
				return
			}
			resp.Answers[i] = answer
		})
	}
	wg.Wait()
	if resp.Failure == nil && ctx.Err() != nil {
		resp.Failure = failure(ctx.Err())
	}
	return resp
}

func complete(ctx context.Context, client openai.Client, req llm.Request, p llm.Prompt) (string, error) {
	// The last attempt's failure says more than "out of time" when retries run into
	// the deadline: a server that refuses connections, or answers 503 every time.
	var lastAttempt error
	opts := []option.RequestOption{option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		res, err := next(r)
		switch {
		case err != nil && ctx.Err() == nil:
			lastAttempt = err
		case err == nil && res.StatusCode >= 400:
			lastAttempt = fmt.Errorf("%s", res.Status)
		}
		return res, err
	})}
	if left := time.Until(req.Deadline); left > 0 {
		// A server asking to be retried later than the budget allows gets its error
		// back at once, rather than a wait until the deadline.
		opts = append(opts, option.WithMaxRetryDelay(left))
	}
	completion, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:     openai.ChatModel(req.Model),
		Messages:  []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(p.System), openai.UserMessage(p.User)},
		MaxTokens: openai.Int(llm.MaxAnswerTokens),
	}, opts...)
	if errors.Is(err, context.DeadlineExceeded) && lastAttempt != nil {
		return "", outOfTime{lastAttempt}
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

// failure describes err without anything the server sent but its status: a server's
// text could hold the key it was given.
func failure(err error) *llm.Failure {
	var apiErr *openai.Error
	switch {
	case errors.As(err, &apiErr):
		return &llm.Failure{Message: apiErr.Error(), Status: apiErr.StatusCode}
	case errors.As(err, new(outOfTime)):
		return &llm.Failure{Message: err.Error(), TimedOut: true}
	case errors.Is(err, context.DeadlineExceeded):
		return &llm.Failure{Message: "no answer within the time budget", TimedOut: true}
	}
	return &llm.Failure{Message: err.Error()}
}

// outOfTime is a request that retried until the deadline, with what its last attempt met.
type outOfTime struct{ last error }

func (e outOfTime) Error() string {
	return "no answer within the time budget; the last attempt: " + e.last.Error()
}
