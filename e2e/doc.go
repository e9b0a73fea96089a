// Package e2e owns agmem's end-to-end tests with the real agents: Claude Code, Codex CLI
// and Gemini CLI, pinned in testdata/npm, each run headless in a network namespace whose
// only interface is loopback, against a scripted model server on 127.0.0.1, with the
// hooks "agmem hooks install" writes into a scratch HOME.
//
// It promises that every tool call and session event an agent reports to its hooks (a
// second, raw hook keeps each payload as sent: the oracle) is in the memory repo once,
// field for field, under the agent's own source, and that the repo then passes "agmem
// verify" and "git fsck --strict". It has no code outside its tests.
package e2e
