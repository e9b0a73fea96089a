#!/usr/bin/env bash
# Runs agmem's whole test suite on a fresh machine: installs what the tests need (git,
# which they use to check every commit agmem writes; Node.js and the npm packages of the
# MCP proxy's end-to-end test and of the real agents' one; OpenSSH's and GnuPG's tools,
# which sign commits; chromium, which shows agmem ui's pages), then vets and tests every
# package.
set -euo pipefail
cd "$(dirname "$0")/.."

# apt_install PACKAGES... WHY: Debian's packages, when a command the tests run is missing.
apt_install() {
  local why="${*: -1}" pkgs=("${@:1:$#-1}")
  echo "scripts/test.sh: installing ${pkgs[*]} ($why)" >&2
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq "${pkgs[@]}" >/dev/null
  else sudo apt-get update -qq && sudo apt-get install -y -qq "${pkgs[@]}" >/dev/null; fi
}
command -v git >/dev/null 2>&1 || apt_install git "the tests check agmem's commits with it"
# The MCP proxy's end-to-end test runs a real MCP server and client from npm, pinned in
# mcp/testdata/npm: Node.js and npm, then those packages, installed again only when the
# lock file changes.
command -v npm >/dev/null 2>&1 || apt_install nodejs npm "the MCP proxy's end-to-end test runs a real MCP server and client"
# Signed commits are tested with real keys, a real ssh-agent and a real gpg, and checked
# with git verify-commit, which runs ssh-keygen.
{ command -v ssh-keygen && command -v ssh-agent && command -v gpg; } >/dev/null 2>&1 ||
  apt_install openssh-client gnupg "signed commits are made with real SSH and OpenPGP keys"
# agmem ui's pages are tested in Debian's chromium, headless.
command -v chromium >/dev/null 2>&1 || apt_install chromium "agmem ui's pages are tested in a real browser"
# npm_ci installs the packages pinned in a directory's lock file, again only when the
# lock changed since the last install.
npm_ci() {
  if ! cmp -s "$1/package-lock.json" "$1/node_modules/.agmem-installed-lock"; then
    (cd "$1" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    cp "$1/package-lock.json" "$1/node_modules/.agmem-installed-lock"
  fi
}
npm_ci mcp/testdata/npm
# The end-to-end tests run the real agents (Claude Code, Codex CLI, Gemini CLI), pinned
# in e2e/testdata/npm: about 1 GB of native binaries, fetched once.
npm_ci e2e/testdata/npm
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  export PATH="/usr/local/go/bin:$PATH"
fi

unformatted=$(gofmt -l . | grep -v '^vendor/' || true)
if [ -n "$unformatted" ]; then
  echo "scripts/test.sh: gofmt would change: $unformatted" >&2
  exit 1
fi
# The binaries the tests build are as the README installs them: static, without
# urfave/cli's man-page writer.
export CGO_ENABLED=0 GOFLAGS=-tags=urfave_cli_no_docs
go vet ./...
go test -count=1 "$@" ./...

# Each fuzz target runs briefly past its seed corpus (go test above ran the seeds):
# FUZZTIME=0 skips this, FUZZTIME=2000000x digs deeper. The budget is a count of runs, not
# a duration: Go 1.26's fuzz coordinator can report a duration's end as a failure,
# "context deadline exceeded", with no failing input (go.dev/issue/75804, fixed in 1.27).
if [ "${FUZZTIME:=20000x}" != 0 ]; then
  for target in $(grep -rl --include='*_test.go' '^func Fuzz' . | xargs grep -ho '^func Fuzz[A-Za-z0-9]*' | sort -u | cut -d' ' -f2); do
    pkg=$(grep -rl --include='*_test.go' "^func $target(" . | head -1 | xargs dirname)
    if ! out=$(go test -run '^$' -fuzz "^$target\$" -fuzztime "$FUZZTIME" "$pkg" 2>&1); then
      echo "$out" | tail -30 >&2
      echo "scripts/test.sh: $target in $pkg failed; the failing input is in $pkg/testdata/fuzz/$target" >&2
      exit 1
    fi
  done
fi
