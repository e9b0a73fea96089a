// Package capture turns what agents send into memory entries: native observation
// objects (FORMAT.md §Observations, including the Python agmem's buffer lines), session events, and
// the hook payloads of Claude Code (§5.2), Codex, Gemini CLI and Cursor. The input
// shape is detected, not declared.
//
// It applies the capture policy before anything is written: the capture rules (what
// is not worth keeping), withheld paths (a call on .env keeps its path, not the
// file), redaction of every string and member name (package redact, with the key each
// value is held under), and size bounds (a cut value notes its size; nesting is
// bounded). It fills what the input left out (id, time, memory type, summary), so that
// every entry it returns is complete except possibly for its session, which the
// journal assigns.
package capture
