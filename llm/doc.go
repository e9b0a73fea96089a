// Package llm owns asking a language model for commit messages: the prompt, the
// asking (openai-go, against any OpenAI-compatible chat-completions server), and the
// cleaning of what comes back.
//
// What it promises:
//
//   - No API key, no request: nothing is started and nothing is sent.
//   - The prompt holds only the observations' memory types, summaries and tool names,
//     never their arguments or results, and is bounded in size whatever the batch.
//   - One time budget covers all of a flush's requests, retries included: a flush never
//     waits on the network for longer.
//   - An answer is never trusted: it is cut to a subject of at most 50 characters and a
//     bounded body with no line that looks like a trailer or names agmem's trailers.
//   - The API key goes only to the server, and never appears in a message agmem prints.
//
// agmem-record, which hooks run, never links this package: openai-go's initialisation
// alone costs a process about 2.4 ms.
package llm
