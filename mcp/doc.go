// Package mcp records the tool calls that pass between an MCP client and a stdio MCP
// server, without changing a byte of what passes.
//
// A Proxy starts the server and relays the Model Context Protocol's stdio transport
// (one JSON-RPC 2.0 message per line) in both directions, and passes the server's
// stderr through. It pairs each of the client's tools/call requests with the answer
// that has its id, and hands each finished Call to a record function.
//
// Invariants:
//   - A message is passed on as it is read, unchanged, whatever it holds: lines of any
//     length, invalid JSON and blank lines included. Nothing but reading from one side,
//     copying the line into an in-memory queue and writing to the other side happens
//     on that path; parsing and pairing happen on a goroutine of their own, and
//     recording on another, so a slow or broken journal never holds a message up.
//   - Ids are per direction: only the client's requests are paired, and only with the
//     server's responses, so the server's own requests to the client (sampling,
//     elicitation, roots) never pass for answers, whatever ids they use.
//   - Every call the client made ends in exactly one Call: answered, failed, cancelled,
//     or, when the server exits or is stopped first, with no answer. Every Call has been
//     handed to the record function when Run returns.
package mcp
