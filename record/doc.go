// Package record is the one way anything enters a memory repo's journal: an agent's
// hook payload, "agmem record" (one object, --jsonl, or a call described by flags), the
// MCP proxy's calls, the lines of files the daemon follows, "agmem import", and Go
// programs that drive an agent, for which it is agmem's library.
//
// Whatever the source, a Recorder applies the same steps, each owned here once:
//   - the memory repo's configuration (.agmem/config.toml and AGMEM_* variables, read
//     when the Recorder is opened) and the capture policy it describes: capture rules,
//     withheld paths, redaction, size bounds (package capture applies them);
//   - capture.enabled = false records nothing, nor does an opt-out file (.agmem-off)
//     at or above the working directory; one at or above the directory an entry
//     happened in (its cwd) keeps that entry out. Each directory is looked up once;
//   - input is read a line at a time by one line reader, bounded by
//     capture.max_input_bytes; each line is decoded once;
//   - one id rule (identify): the same history piped, imported or watched twice is
//     kept once, while a call that comes with neither id nor time is new each time;
//   - one journal transaction per call: what a call records is durable when it
//     returns, or nothing of it is.
//
// For a Go program, in process, with the hook's guarantees and no subprocess:
//
//	r, err := record.Open("/home/ana/agent-memory", record.Options{Session: "run-42"})
//	...
//	out, err := r.Record(record.Observation{Tool: "read_file",
//		Arguments: map[string]any{"path": "main.go"}, Result: contents})
//
// agmem-record, the binary hooks run, is this package's Main: the package links no git
// code, no model client and no command line library, so that it starts fast.
package record
