// Package classify owns the capture rules of agmem: whether a tool call is kept, which
// memory type it is (episodic, semantic or procedural), and its one-line summary.
//
// Everything here is a pure function of its arguments: no I/O, no clock, no state. The
// rules are the Python agmem 0.3.0's (its ignore list, its 50-character rule, its
// MEMORY_TYPE_MAP in its order, its summary), with two changes. Names are matched by word
// tokens instead of substrings, so that "latest_news" no longer matches "test" nor
// "digit_ocr" "git_"; and the tool names real agents use (Claude Code's Read, Bash, TodoWrite
// …, and mcp__<server>__<tool>) are classified by name before any pattern is tried.
//
// A summary is always one line of at most 200 runes, whatever the input.
package classify
