// Package importer reads history kept elsewhere: the Python agmem's pending state
// (.mem/daemon_buffer.jsonl and .mem/daemon_session.json), native JSONL (anything
// agmem record --jsonl accepts), and Claude Code transcripts, whose tool_use blocks it
// pairs with the tool_result that answers each. Files are recognised by their content,
// not their names. It only reads: package record decodes what it gives, through the
// same capture policy and id rule as every other input, and records it.
package importer
