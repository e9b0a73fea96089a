#!/usr/bin/env bash
# Measures agmem as its users meet it, each figure beside a reference taken in the same
# run: `agmem-record` (what hooks run) of a Claude Code PostToolUse payload against
# /bin/true (and `agmem record`, and node and python3 for scale), and `agmem flush` into
# a new repo and into one with 100,000 files in its history, against `git add -A && git
# commit` of the same files; 16 hook processes at once, alone and while a flush of 10,000
# observations runs; one
# record --jsonl of 100,000 observations, the journal's size, and replay of that
# session from the journal and from git. Prints the tables BENCHMARKS.md keeps, then
# one summary table of issue 9's targets. Takes about ten minutes on 2 cores.
#
# Run as root, the flush benchmark works in a new ext4 file system (a loop device) so
# that what the disk did before does not leak into its figures: ext4 makes files slowly
# for a while after many were deleted. BENCH_DIR=DIR measures flushes in DIR instead.
# The hook benchmark runs in $TMPDIR, on the disk itself: a loop device adds its own
# cost to every fsync.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v git >/dev/null || { echo "bench.sh: git is needed" >&2; exit 1; }

bin=$(mktemp -d)/agmem
# Built as the README installs them: static, without urfave/cli's man-page writer.
export CGO_ENABLED=0 GOFLAGS=-tags=urfave_cli_no_docs
go build -o "$bin" .
go build -o "$(dirname "$bin")/agmem-record" ./cmd/agmem-record # what hooks run, beside agmem as installed
export BENCH_ROWS=$(dirname "$bin")/rows.md
echo "## machine"
echo "$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(go version | cut -d' ' -f3), $(git --version)"
echo
echo "## agmem-record (the hook): process wall time, ${HOOK_RUNS:=500} runs interleaved with /bin/true, in ${TMPDIR:-/tmp} ($(df -T "${TMPDIR:-/tmp}" | awk 'NR==2 {print $2}'))"
go run ./scripts/bench hook -agmem "$bin" -runs "$HOOK_RUNS" -scale
echo
echo "## agmem-record (the hook): process wall time, many at once, alone and during a flush"
go run ./scripts/bench concurrent -agmem "$bin" -writers "${WRITERS:-16}" -n "${CONCURRENT_FLUSH:-10000}"
echo
echo "## agmem record --jsonl, the journal, agmem replay --json: one session, in ${TMPDIR:-/tmp}"
go run ./scripts/bench ingest -agmem "$bin" -n "${INGEST:-100000}"

where=${BENCH_DIR:-}
if [ -z "$where" ] && [ "$(id -u)" = 0 ] && command -v mkfs.ext4 >/dev/null; then
  img=$(mktemp /var/tmp/agmem-bench.XXXXXX)
  mnt=$(mktemp -d)
  cleanup() { umount "$mnt" 2>/dev/null || true; rm -rf "$img" "$mnt"; }
  trap cleanup EXIT
  truncate -s 20G "$img" && mkfs.ext4 -q -F -N 3000000 "$img" &&
    mount -o loop "$img" "$mnt" && where=$mnt && fresh=", made for this run" || where=
fi
if [ -n "$where" ]; then export TMPDIR=$where; fi

echo
echo "## agmem flush: wall time, in ${TMPDIR:-/tmp} ($(df -T "${TMPDIR:-/tmp}" | awk 'NR==2 {print $2}')${fresh:-})"
go run ./scripts/bench flush -agmem "$bin" -n "${FLUSH_SIZES:-1000,10000}" -history "${HISTORY:-100000}" -reps "${REPS:-3}"

echo
echo "## summary: issue 9's targets"
echo "| row | target | measured | |"
echo "|---|---|---|---|"
cat "$BENCH_ROWS"
