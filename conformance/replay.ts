/**
 * Failure files and their replay. Every failed conformance row and every fuzz violation is written as one JSON
 * file (`--failures <dir>`, default `./conformance-failures`); `npm run conformance -- --replay <file>` runs it
 * again against the URLs it names (or `--gateway`/`--modelserver`), with the secrets given again as flags
 * (keys, payers and the hooks are never written into a file):
 * - a row: its machine (the file holds the machine itself) replayed from its first row to the failed one, with
 *   the run's seed — the same wallets, names and files;
 * - a fuzz violation: the requests that led to it, sent again in order with fresh credentials of their tiers,
 *   each given its checks (the link checks of a chain step, the probe check of a probe).
 * The replay reproduces the failure when the same row fails, or the same check fails on the last request.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import path from 'node:path'
import { formatText } from './report.js'
import { runMachine } from './runner.js'
import type { Machine, RowResult, Server, Target } from './types.js'
import type { CheckName } from './fuzz/checks.js'
import { linkChecks } from './fuzz/chains.js'
import { Credentials } from './fuzz/Credentials.js'
import { FuzzRun, type ReplayStep, type Violation } from './fuzz/FuzzRun.js'
import { addListedTools, mcpToolsOf } from './fuzz/mcpChecks.js'
import { loadOperations } from './fuzz/operations.js'
import { probeCheck } from './fuzz/probes.js'
import { isAnswer } from './fuzz/sendRequest.js'

export const DEFAULT_FAILURES_DIR = 'conformance-failures'

export type RowCase = {
  replay: 1
  kind: 'row'
  machine: Machine
  row: string
  variant?: string
  seed: number
  urls: Partial<Record<Server, string>>
  vars: Record<string, string>
  problems: string[]
}

export type FuzzCase = {
  replay: 1
  kind: 'fuzz'
  check: CheckName
  problem: string
  seed: number
  urls: Partial<Record<Server, string>>
  maxResponseMs: number
  steps: ReplayStep[]
}

export type FailureCase = RowCase | FuzzCase

/** Writes one failure; returns its path. The name is stable for the same failure (a rerun overwrites it). */
export function writeFailureFile(dir: string, failure: FailureCase): string {
  mkdirSync(dir, { recursive: true })
  const what = failure.kind === 'row' ? `${failure.machine.machine}-${failure.row}${failure.variant ? `-${failure.variant}` : ''}` : `${failure.check}-${failure.steps.at(-1)?.operation ?? 'run'}`
  const id = createHash('sha256').update(JSON.stringify(failure.kind === 'row' ? [failure.machine.machine, failure.row, failure.variant, failure.seed] : [failure.check, failure.steps.map((s) => s.request)])).digest('hex').slice(0, 10)
  const file = path.join(dir, `${failure.kind}-${what.replace(/[^A-Za-z0-9._-]+/g, '_')}-${id}.json`)
  writeFileSync(file, `${JSON.stringify(failure, null, 2)}\n`)
  return file
}

export function readFailureFile(file: string): FailureCase {
  const value = JSON.parse(readFileSync(file, 'utf8')) as Partial<FailureCase>
  if (value.replay !== 1 || (value.kind !== 'row' && value.kind !== 'fuzz')) throw new Error(`${file} is not a conformance failure file`)
  return value as FailureCase
}

export function rowCase(machine: Machine, result: RowResult, seed: number, target: Target): RowCase {
  const { file: _file, ...inline } = machine
  return { replay: 1, kind: 'row', machine: inline as Machine, row: result.id, variant: result.variant, seed, urls: target.urls, vars: target.vars ?? {}, problems: result.problems }
}

export function fuzzCase(v: Violation, seed: number, urls: Partial<Record<Server, string>>, maxResponseMs: number): FuzzCase {
  return { replay: 1, kind: 'fuzz', check: v.check, problem: v.problem, seed, urls, maxResponseMs, steps: v.steps }
}

export type ReplayOutcome = { reproduced: boolean; text: string }

export async function replayRow(failure: RowCase, target: Target): Promise<ReplayOutcome> {
  const results = await runMachine(failure.machine, target, { seed: failure.seed, until: failure.row })
  const mine = results.filter((r) => r.id === failure.row && (failure.variant === undefined || r.variant === failure.variant))
  const reproduced = mine.some((r) => r.outcome === 'failed')
  const skipped = mine.find((r) => r.outcome === 'skipped')
  const text = [
    formatText(results),
    skipped ? `row ${failure.row} was skipped (${skipped.reason}): give what it needs again (--hooks, --key, --devnet…)` : reproduced ? `reproduced: row ${failure.row} fails again` : `not reproduced: row ${failure.row} passes now`,
  ].join('\n')
  return { reproduced, text }
}

export async function replayFuzz(failure: FuzzCase, options: { urls: Partial<Record<Server, string>>; credentials: Credentials }): Promise<ReplayOutcome> {
  const servers = [...new Set(failure.steps.map((s) => s.server))]
  const operations = (await Promise.all(servers.map((s) => loadOperations(s)))).flat()
  const mcp = operations.find((op) => op.mcpTools)
  const mcpTools = mcpToolsOf(mcp)
  const run = new FuzzRun({ urls: options.urls, credentials: options.credentials, operations, links: [], mcpTools, requestTimeoutMs: 60_000, maxResponseMs: failure.maxResponseMs, cut: new AbortController().signal })
  const lines: string[] = []
  let previous: Awaited<ReturnType<FuzzRun['send']>> | undefined
  let failedAtLast = false
  for (const [i, step] of failure.steps.entries()) {
    const op = operations.find((o) => o.server === step.server && o.id === step.operation)
    if (!op) throw new Error(`the document has no operation ${step.operation} on the ${step.server}`)
    const x = await run.send(op, step.request, step.tier)
    if (mcp && op === mcp && isAnswer(x.answer) && step.request.body && 'text' in step.request.body && /tools\/call/.test(step.request.body.text)) {
      const listed = await run.send(op, { ...step.request, body: { text: '{"jsonrpc":"2.0","id":0,"method":"tools/list"}' } }, step.tier)
      if (isAnswer(listed.answer) && listed.answer.status === 200) addListedTools(mcpTools, JSON.parse(listed.answer.text))
    }
    const extra = [
      ...(step.link && previous ? linkChecks(previous, step.link, x) : []),
      ...(step.probe && isAnswer(x.answer) ? [probeCheck({ ...step.probe, request: step.request }, x.answer.status, x.answer.headers)] : []),
    ]
    const results = run.check(x, 'drawn', i, failure.steps.slice(0, i + 1), extra, { judge: step.probe?.check !== 'unsupported_method' })
    const failing = results.filter((r) => r.problem !== undefined)
    lines.push(`${i + 1}/${failure.steps.length} ${step.request.method} ${step.request.path} [${step.tier}] → ${isAnswer(x.answer) ? x.answer.status : `no answer (${x.answer.error})`}`)
    for (const r of failing) lines.push(`    ✗ ${r.check}: ${r.problem}`)
    if (i === failure.steps.length - 1) failedAtLast = failing.some((r) => r.check === failure.check)
    previous = x
  }
  lines.push(failedAtLast ? `reproduced: ${failure.check} fails again — was: ${failure.problem}` : `not reproduced: ${failure.check} holds now — was: ${failure.problem}`)
  return { reproduced: failedAtLast, text: lines.join('\n') }
}
