/**
 * The conformance runner: replays every machine (one row format, conformance/types.ts) against a target and
 * returns one result per row — passed, failed, or skipped with the reason (a hook, key, server or payer the
 * target lacks, or a row that cannot hold on a stateless mock). A skipped row is never counted as passed.
 * What a row does is its machine's driver (conformance/drivers/); every response any driver sees is
 * checked against the server's OpenAPI document, and a document mismatch fails the row.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { parse } from 'yaml'
import { DocumentClient, repoRoot } from './DocumentClient.js'
import { drivers } from './drivers/index.js'
import { SeededRandom } from './SeededRandom.js'
import type { Machine, Row, RowResult, Target } from './types.js'

export { repoRoot }

/**
 * The nine machines of the seeds, by name, in replay order (the model server's residency before its pull), the
 * model server's LLM surfaces, and the agents' protocols (MCP 2026-07-28, batch settlement, sign-in-with-x).
 */
export const MACHINES: Record<string, string> = {
  'arrival-gate': 'gateway/arrivalGate.yaml',
  'wallet-login': 'gateway/login.yaml',
  'shadow-nonce': 'shadow/nonce.yaml',
  'shadow-bearer': 'shadow/bearer.yaml',
  'shadow-cabinet': 'shadow/cabinet.yaml',
  'shadow-vault-lock': 'shadow/vault.yaml',
  'paid-storage-request': 'storage/paidStorage.yaml',
  'mcp-payment': 'mcp/mcpPayment.yaml',
  'model-residency': 'modelserver/residency.yaml',
  'pull-progress': 'modelserver/pullProgress.yaml',
  'model-surfaces': 'modelserver/surfaces.yaml',
  'mcp-2026': 'agents/mcp2026.yaml',
  'batch-settlement': 'agents/batchSettlement.yaml',
  'sign-in-with-x': 'agents/signInWithX.yaml',
}

/** A machine by name (`shadow-nonce`) or by file path. */
export function machineFile(nameOrFile: string): string {
  const known = Object.hasOwn(MACHINES, nameOrFile) ? MACHINES[nameOrFile] : undefined
  return known ? path.join(repoRoot, 'conformance', 'machines', known) : path.resolve(nameOrFile)
}

export function loadMachine(nameOrFile: string): Machine {
  const file = machineFile(nameOrFile)
  const machine = parse(readFileSync(file, 'utf8')) as Machine
  for (const field of ['machine', 'seed', 'server', 'driver', 'rows'] as const) {
    if (machine?.[field] === undefined) throw new Error(`${file}: machine lacks \`${field}\``)
  }
  if (!Object.hasOwn(drivers, machine.driver)) throw new Error(`${file}: unknown driver ${machine.driver} (known: ${Object.keys(drivers).join(', ')})`)
  return { ...machine, file }
}

/** Context a driver gets for one machine. */
export type MachineContext = { machine: Machine; target: Target; client: DocumentClient; random: SeededRandom; vars: Record<string, string> }

/** A driver's per-machine session: state carried from row to row. */
export interface Session {
  /** Runs of a row (paid storage: one per network); default one run without a variant. */
  variants?(row: Row): (string | undefined)[]
  /** Why this run cannot happen on this target (a payer, a fault hook of the right kind…), if it cannot. */
  missing?(row: Row, variant: string | undefined): string | undefined
  /** Performs the row; problems go into `problems`. Throwing fails the row with the error's message. */
  run(row: Row, variant: string | undefined, problems: string[]): Promise<void>
}
export type Driver = (context: MachineContext) => Session

export type RunOptions = {
  /** Seed of every random value of the run (wallets, names, files). */
  seed?: number
  /** Only these row ids. */
  rows?: string[]
  /** Stop after this row (a replay runs the rows that lead to the failed one, then it). */
  until?: string
  /** Sees each result as it is made. */
  onResult?: (result: RowResult) => void
}

function mockExpect(row: Row): Row {
  if (typeof row.mock !== 'object' || row.mock === null) return row
  return { ...row, expect: row.mock.expect ?? row.expect }
}

function whyNot(row: Row, machine: Machine, target: Target): string | undefined {
  if (!target.urls[machine.server]) return `no ${machine.server} URL (--${machine.server})`
  if (target.mock && !row.mock) return 'needs server state, signatures or time: does not hold on a stateless mock'
  const missingKeys = (machine.keys ?? []).filter((k) => !Object.hasOwn(target.keys, k))
  if (missingKeys.length) return `no key ${missingKeys.map((k) => `${k} (--key ${k}=0x…)`).join(', ')}`
  const missingHooks = (row.needs ?? []).filter((h) => !target.hooks[h])
  if (missingHooks.length) return `target lacks hook(s): ${missingHooks.join(', ')}`
  return undefined
}

/** Replays one machine, row by row, in order. */
export async function runMachine(machine: Machine, target: Target, options: RunOptions = {}): Promise<RowResult[]> {
  const random = new SeededRandom(options.seed ?? 1).fork(machine.machine)
  const client = new DocumentClient(target)
  const vars: Record<string, string> = { ...machine.vars, ...target.vars }
  const session = drivers[machine.driver]!({ machine, target, client, random, vars })
  const results: RowResult[] = []
  for (const original of machine.rows) {
    if (options.rows && !options.rows.includes(original.id)) continue
    const row = target.mock ? mockExpect(original) : original
    const skip = whyNot(original, machine, target)
    const variants = session.variants?.(row) ?? [undefined]
    for (const variant of variants) {
      const started = Date.now()
      const base = { machine: machine.machine, seed: machine.seed, id: row.id, variant, from: row.from, event: row.event, to: row.to, expected: row.expect ?? row.do }
      const reason = skip ?? session.missing?.(row, variant)
      if (reason) {
        const result: RowResult = { ...base, outcome: 'skipped', reason, problems: [], exchanges: [], ms: 0 }
        results.push(result)
        options.onResult?.(result)
        continue
      }
      const problems: string[] = []
      const first = client.exchanges.length
      try {
        await session.run(row, variant, problems)
      } catch (error) {
        problems.push(`error: ${error instanceof Error ? error.message : String(error)}`)
      }
      const exchanges = client.exchanges.slice(first)
      for (const e of exchanges) for (const s of e.schemaErrors) problems.push(`document: ${e.method} ${e.path} → ${e.status}: ${s}`)
      const result: RowResult = { ...base, outcome: problems.length ? 'failed' : 'passed', problems, exchanges, ms: Date.now() - started }
      results.push(result)
      options.onResult?.(result)
    }
    if (options.until === original.id) break
  }
  return results
}

/** Replays machines in order (names or files; default all nine). */
export async function runMachines(machines: string[] | undefined, target: Target, options: RunOptions = {}): Promise<RowResult[]> {
  const results: RowResult[] = []
  for (const name of machines ?? Object.keys(MACHINES)) results.push(...(await runMachine(loadMachine(name), target, options)))
  return results
}
