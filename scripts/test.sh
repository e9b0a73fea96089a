#!/usr/bin/env bash
# Runs agmem's whole test suite on a fresh machine: installs what the tests need (git,
# which they use to check every commit agmem writes), then vets and tests every package.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v git >/dev/null 2>&1; then
  echo "scripts/test.sh: installing git (the tests check agmem's commits with it)" >&2
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq git >/dev/null
  else sudo apt-get update -qq && sudo apt-get install -y -qq git >/dev/null; fi
fi
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  export PATH="/usr/local/go/bin:$PATH"
fi

unformatted=$(gofmt -l . | grep -v '^vendor/' || true)
if [ -n "$unformatted" ]; then
  echo "scripts/test.sh: gofmt would change: $unformatted" >&2
  exit 1
fi
go vet ./...
go test -count=1 "$@" ./...

# Each fuzz target runs briefly past its seed corpus (go test above ran the seeds):
# FUZZTIME=0 skips this, FUZZTIME=5m digs deeper.
if [ "${FUZZTIME:=2s}" != 0 ]; then
  for target in $(grep -rl --include='*_test.go' '^func Fuzz' . | xargs grep -ho '^func Fuzz[A-Za-z0-9]*' | sort -u | cut -d' ' -f2); do
    pkg=$(grep -rl --include='*_test.go' "^func $target(" . | head -1 | xargs dirname)
    if ! out=$(go test -run '^$' -fuzz "^$target\$" -fuzztime "$FUZZTIME" "$pkg" 2>&1); then
      echo "$out" | tail -30 >&2
      echo "scripts/test.sh: $target in $pkg failed; the failing input is in $pkg/testdata/fuzz/$target" >&2
      exit 1
    fi
  done
fi
