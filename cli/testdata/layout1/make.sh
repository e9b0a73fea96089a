#!/bin/sh
# Makes this directory's fixture: a memory repo written by agmem before layout 2 (the
# released code, commit 8600002), as repo.bundle, its journal as journal.db.gz, and what
# that agmem replays of each session as replay-<session>.jsonl.
#   git worktree add /tmp/old 8600002 && (cd /tmp/old && go build -o /tmp/agmem-old .)
#   sh cli/testdata/layout1/make.sh /tmp/agmem-old
set -eu
agmem=$1
out=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GIT_AUTHOR_NAME=old GIT_AUTHOR_EMAIL=old@example.com GIT_COMMITTER_NAME=old GIT_COMMITTER_EMAIL=old@example.com
export GIT_AUTHOR_DATE=2026-03-01T10:00:00Z GIT_COMMITTER_DATE=2026-03-01T10:00:00Z
"$agmem" init "$work/mem" >/dev/null
cd "$work/mem"
obs() { # session id type tool time arg result
	printf '{"session_id":"%s","id":"%s","memory_type":"%s","tool_name":"%s","timestamp":"%s","arguments":{"path":"%s"},"result":"%s","source":"native"}\n' "$@"
}
{
	obs s-old-1 01JNG31MCR6H8QM6PHFBFSW801 semantic read_file 2026-03-01T09:00:00Z notes.md "the release notes mention the layout of the memory repo"
	obs s-old-1 01JNG31MCR6H8QM6PHFBFSW802 procedural TodoWrite 2026-03-01T09:01:00Z plan.md "a plan: write the parser, then the tests, then the docs"
	obs s-old-1 01JNG31MCR6H8QM6PHFBFSW803 episodic Bash 2026-03-01T09:02:00Z make "make test passed in the old layout, all green, forty tests in four packages"
	obs 0b7e4d2c-8a31-4f6e-b5c9-1d2e3f4a5b6c 01JNG31MCR6H8QM6PHFBFSW804 semantic read_file 2026-03-02T11:00:00Z spec.md "the spec of the flat semantic directory, read once"
} | "$agmem" record --jsonl >/dev/null
"$agmem" flush >/dev/null
{
	obs s-old-1 01JNG31MCR6H8QM6PHFBFSW805 semantic grep 2026-03-02T12:00:00Z src "grep found the flat layout in three places: render, recall and maintain"
	obs s-cont 01JNG31MCR6H8QM6PHFBFSW806 semantic read_file 2026-03-03T08:00:00Z cont.md "a session that goes on after the upgrade starts here"
} | "$agmem" record --jsonl >/dev/null
"$agmem" flush >/dev/null
git bundle create -q "$out/repo.bundle" --all
gzip -9 -n < .agmem/journal.db > "$out/journal.db.gz"
for s in s-old-1 0b7e4d2c-8a31-4f6e-b5c9-1d2e3f4a5b6c s-cont; do
	"$agmem" replay --json --session "$s" > "$out/replay-$s.jsonl"
done
git ls-files > "$out/files.txt"
