/**
 * `npm run fuzz -- --gateway <url> --modelserver <url> [--count n] [--seed n] [--seconds s]
 *   [--key overlord=0x…] [--concurrency n] [--only i] [--report <file.json>]`
 *
 * Spec-driven fuzzing of both documents (conformance/fuzz/fuzz.ts). Exit 0: no violation; 1: violations
 * (each printed with the request and the seed to reproduce it); 2: bad arguments.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { privateKeyToAccount } from 'viem/accounts'
import { fuzz, type Violation } from './fuzz.js'
import { KNOWN_FAILURES } from './knownFailures.js'

const HELP = `Usage: npm run fuzz -- [options]

Derives requests from every operation of openapi/gateway.yaml and openapi/modelserver.yaml (valid ones,
boundary values, wrong types, missing and extra fields, hostile and oversize strings, malformed JSON, wrong
content types) under each credential tier (none, session, bearer, garbage), and fails on any 5xx, any status
the document does not list, any response that does not match the document, any body revealing a server
path, and any request that gets no answer. Deterministic by seed; bounded by count and time: no request
starts after --seconds, and one still in flight a grace later (at most 15 s) is cut off and counted apart.
Run it against a disposable deployment: valid requests change state (they delete models, log out…).

Options:
  --gateway <url>        the gateway
  --modelserver <url>    the model server
  --count <n>            at most n requests (default 2000)
  --seconds <s>          at most s seconds (default 120)
  --seed <n>             the seed (default: random, printed)
  --key overlord=0x…     the shadow tier's key, for the bearer tier (without it that tier sends no bearer)
  --concurrency <n>      requests in flight (default 12)
  --only <i>             only request number i of the seed (reproduce one violation)
  --report <file>        write the JSON report
  -h, --help             this text

Exit status: 0 no violation, 1 violations, 2 bad arguments.
`

function fail(message: string): never {
  process.stderr.write(`fuzz: ${message}\nRun with --help for usage.\n`)
  process.exit(2)
}

let values
try {
  ;({ values } = parseArgs({
    strict: true,
    allowPositionals: false,
    options: {
      gateway: { type: 'string' },
      modelserver: { type: 'string' },
      count: { type: 'string', default: '2000' },
      seconds: { type: 'string', default: '120' },
      seed: { type: 'string' },
      key: { type: 'string', multiple: true },
      concurrency: { type: 'string', default: '12' },
      only: { type: 'string' },
      report: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  }))
} catch (error) {
  fail((error as Error).message)
}
if (values.help) {
  process.stdout.write(HELP)
  process.exit(0)
}
const integer = (flag: string, value: string | undefined, min: number) => {
  if (value === undefined) return undefined
  if (!/^\d{1,15}$/.test(value) || Number(value) < min) fail(`--${flag} expects an integer ≥ ${min}, got ${JSON.stringify(value)}`)
  return Number(value)
}
const url = (flag: string, value: string | undefined) => {
  if (value === undefined) return undefined
  try {
    if (!/^https?:$/.test(new URL(value).protocol)) throw new Error()
  } catch {
    fail(`--${flag} expects an http(s) URL, got ${JSON.stringify(value)}`)
  }
  return value.replace(/\/+$/, '')
}
const gateway = url('gateway', values.gateway)
const modelserver = url('modelserver', values.modelserver)
if (!gateway && !modelserver) fail('give --gateway <url> and/or --modelserver <url>')
let overlord
for (const entry of values.key ?? []) {
  const [name, hex] = [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]
  if (name !== 'overlord' || !/^0x[0-9a-fA-F]{64}$/.test(hex)) fail(`--key expects overlord=0x<64 hex>, got ${JSON.stringify(entry)}`)
  overlord = privateKeyToAccount(hex as `0x${string}`)
}
const seed = integer('seed', values.seed, 0) ?? Math.floor(Math.random() * 2 ** 31)
const count = integer('count', values.count, 1)!
const seconds = integer('seconds', values.seconds, 1)!
process.stdout.write(`fuzz: seed ${seed}; at most ${count} requests in ${seconds} s; gateway ${gateway ?? '-'}; model server ${modelserver ?? '-'}\n`)
const report = await fuzz({
  urls: { gateway, modelserver },
  seed,
  count,
  seconds,
  overlord,
  concurrency: integer('concurrency', values.concurrency, 1),
  only: integer('only', values.only, 0),
  knownFailures: KNOWN_FAILURES,
})
const show = (v: Violation) =>
  `✗ #${v.index} ${v.server} ${v.operation} [tier ${v.tier}, ${v.mutation}] ${v.problem}${v.known ? ` (known: ${v.known})` : ''}\n    ${v.request.method} ${v.request.path}${v.request.body ? ` ${v.request.body}` : ''}\n    → ${v.status ?? 'no answer'} ${v.response ?? ''}\n    reproduce: npm run fuzz -- --seed ${seed} --only ${v.index}`
for (const v of report.violations.slice(0, 50)) process.stdout.write(`${show(v)}\n`)
if (report.violations.length > 50) process.stdout.write(`… ${report.violations.length - 50} more violations\n`)
for (const v of report.known.slice(0, 10)) process.stdout.write(`${show(v)}\n`)
process.stdout.write(
  `fuzz: ${report.requests} requests (${Object.entries(report.byServer).map(([s, n]) => `${s} ${n}`).join(', ')}) over ${report.operations} operations in ${report.seconds} s; statuses ${JSON.stringify(report.byStatus)}\n` +
    `fuzz: ${(report.requests / Math.max(report.seconds, 0.1)).toFixed(1)} requests/s; ${report.cutOff} cut off in flight at the time limit; ${report.retried} resent on a new connection\n` +
    `fuzz: ${report.violations.length} violations, ${report.known.length} known failures — seed ${seed}\n`,
)
if (values.report) {
  mkdirSync(path.dirname(path.resolve(values.report)), { recursive: true })
  writeFileSync(values.report, `${JSON.stringify(report, null, 2)}\n`)
}
process.exit(report.violations.length ? 1 : 0)
