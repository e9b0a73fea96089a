#!/usr/bin/env bash
# The torture run of issue 3: several agmem record processes and flush loops at once
# while a killer sends SIGKILL to random agmem processes, for a set duration (default
# 10m); then a last flush and the check that every acknowledged observation is in
# exactly one commit. Prints: acknowledged, committed, lost, duplicated, kills, and
# what failed; the whole log is kept in $TMPDIR.
#   scripts/torture.sh [DURATION]     e.g. scripts/torture.sh 90s
set -euo pipefail
cd "$(dirname "$0")/.."
command -v git >/dev/null || { echo "torture.sh: git is needed" >&2; exit 1; }
log=$(mktemp "${TMPDIR:-/tmp}/agmem-torture.XXXXXX.log")
status=0
go test -count=1 -timeout 0 -run '^TestTorture$' -v ./cli -args -torture "${1:-10m}" >"$log" 2>&1 || status=$?
grep -E -A3 'torture for|^(--- |ok|FAIL)|torture_test.go' "$log" || true
echo "log: $log"
exit "$status"
