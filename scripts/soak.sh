#!/usr/bin/env bash
# A simulated year of agents in one memory repo: three agents' sessions recorded day by
# day on an accelerated clock, the daemon flushing and pushing to a bare remote, agmem
# gc each month; a table per simulated month, the checks of the year's end and
# docs/soak-year.png (flush time and repo size over the year). A benchmark, not a CI
# test: TestShortSoak runs the same checks on forty days. Flags go to the soak, e.g.
# scripts/soak.sh -observations 250000 -sessions 1250. Takes about half an hour on 2
# cores at its default of 1,000,000 observations in 5,000 sessions.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v git >/dev/null || { echo "soak.sh: git is needed" >&2; exit 1; }
bin=$(mktemp -d)/agmem
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" .
echo "$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(go version | cut -d' ' -f3), $(git --version)"
go run ./scripts/soak -agmem "$bin" -png docs/soak-year.png "$@"
