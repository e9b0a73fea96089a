#!/usr/bin/env bash
# Measures agmem as its users meet it, each figure beside a reference taken in the same
# run: `agmem record` of a Claude Code PostToolUse payload against /bin/true (and node
# and python3 for scale), and `agmem flush` into a new repo and into one with 100,000
# files in its history, against `git add -A && git commit` of the same files.
# Prints the tables BENCHMARKS.md keeps. Takes a few minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v git >/dev/null || { echo "bench.sh: git is needed" >&2; exit 1; }
bin=$(mktemp -d)/agmem
go build -o "$bin" .
echo "## machine"
echo "$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(go version | cut -d' ' -f3), $(git --version)"
echo
echo "## agmem record: process wall time, ${HOOK_RUNS:=500} runs interleaved with /bin/true"
go run ./scripts/bench hook -agmem "$bin" -runs "$HOOK_RUNS" -scale
echo
echo "## agmem flush: wall time"
go run ./scripts/bench flush -agmem "$bin" -n "${FLUSH_SIZES:-1000,10000}" -history "${HISTORY:-100000}" -reps "${REPS:-3}"
