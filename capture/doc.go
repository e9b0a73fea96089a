// Package capture turns what agents send into memory entries: native observation
// objects (SPEC §5.1, including the Python agmem's buffer lines) and Claude Code hook
// payloads (§5.2). The input shape is detected, not declared.
//
// It applies the capture rules (what is not worth keeping) and fills what the input left
// out (id, time, memory type, summary), so that every entry it returns is complete except
// possibly for its session, which the journal assigns.
package capture
