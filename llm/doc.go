// Package llm owns asking a language model for commit messages: the prompt, the
// protocol with the agmem-llm helper that does the asking, and the cleaning of what comes
// back.
//
// What it promises:
//
//   - No API key, no request: nothing is started and nothing is sent.
//   - The prompt holds only the observations' memory types, summaries and tool names,
//     never their arguments or results, and is bounded in size whatever the batch.
//   - One time budget covers all of a flush's requests, retries included; the helper is
//     killed shortly after it, so a flush never waits on the network for longer.
//   - An answer is never trusted: it is cut to a subject of at most 50 characters and a
//     bounded body with no line that looks like a trailer or names agmem's trailers.
//   - The API key travels to the helper in its environment, never on its command line
//     (which ps shows) nor in its request, and never appears in a message agmem prints.
//
// openai-go lives in the helper (cmd/agmem-llm), not here: linked into agmem it would
// cost every `agmem record`, which runs on each tool call of an agent, about 2.4 ms of
// start-up. This package imports nothing heavier than the standard library and memory.
package llm
