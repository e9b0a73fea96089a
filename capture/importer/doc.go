// Package importer owns bringing in history kept elsewhere: the Python agmem's pending
// state (.mem/daemon_buffer.jsonl and .mem/daemon_session.json), native JSONL (anything
// agmem record --jsonl accepts), and Claude Code transcripts. Files are recognised by
// their content, not their names, and every entry goes through the same capture policy
// as agmem record (redaction first). Entries that carry no id get one derived from their
// content, so that importing a file twice adds nothing.
package importer
