/**
 * `npm run fuzz -- --gateway <url> --modelserver <url> [--devnet <devnet.json>] [--count n] [--seed n]
 *   [--seconds s] [--key overlord=0x…] [--concurrency n] [--only i] [--max-response-time ms] [--chains n]
 *   [--report json=<f>,junit=<f>,text=<f>] [--failures <dir>]`
 *
 * Spec-driven fuzzing of both documents (conformance/fuzz/fuzz.ts). Exit 0: no violation; 1: violations (each
 * printed with the request and written as a failure file `npm run conformance -- --replay` runs again); 2: bad
 * arguments.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { privateKeyToAccount } from 'viem/accounts'
import { readDevnetFile } from '../devnetFile.js'
import { evmNetworkOf, evmPayer } from '../evmPayer.js'
import { DEFAULT_FAILURES_DIR, fuzzCase, writeFailureFile } from '../replay.js'
import type { Payer } from '../types.js'
import { CHECK_NAMES } from './checks.js'
import { fuzz } from './fuzz.js'
import { formatFuzzJunit, formatFuzzText } from './fuzzReport.js'
import { KNOWN_FAILURES } from './knownFailures.js'

const HELP = `Usage: npm run fuzz -- [options]

Derives requests from every operation of openapi/gateway.yaml and openapi/modelserver.yaml (valid ones,
boundary values, wrong types, missing and extra fields, hostile and oversize strings, malformed JSON, wrong
content types; MCP calls of every documented tool) under each credential tier (none, session, bearer, garbage),
probes every undocumented method and left-out required header, then follows the documents' OpenAPI links in
stateful chains. Every exchange gets the named checks it concerns:
${CHECK_NAMES.map((n) => `  ${n}`).join('\n')}
Deterministic by seed; the drawn requests are bounded by count and time (no request starts after --seconds,
one still in flight a grace later — at most 15 s — is cut off and counted apart). Run it against a disposable
deployment: valid requests change state (they delete models, log out…).

Options:
  --gateway <url>            the gateway
  --modelserver <url>        the model server
  --devnet <devnet.json>     against \`npm start\`: the overlord TEST key, an EVM payer (a chain then starts from
                             a paid upload) and the model registry (a chain then pulls from it)
  --count <n>                at most n drawn requests (default 2000)
  --seconds <s>              drawn requests for at most s seconds (default 120)
  --seed <n>                 the seed (default: random, printed)
  --key overlord=0x…         the shadow tier's key, for the bearer tier (without it that tier sends no bearer)
  --concurrency <n>          requests in flight (default 12)
  --only <i>                 only drawn request number i of the seed (reproduce one violation)
  --max-response-time <ms>   the max_response_time check's limit (default 30000)
  --chains <n>               stateful chains started from each root (default 2; 0: none)
  --report json=<f>,junit=<f>,text=<f>   write the reports (a bare <f> is the JSON report)
  --failures <dir>           where each violation is written as a replayable file (default ./${DEFAULT_FAILURES_DIR})
  -h, --help                 this text

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
      devnet: { type: 'string' },
      count: { type: 'string', default: '2000' },
      seconds: { type: 'string', default: '120' },
      seed: { type: 'string' },
      key: { type: 'string', multiple: true },
      concurrency: { type: 'string', default: '12' },
      only: { type: 'string' },
      'max-response-time': { type: 'string' },
      chains: { type: 'string' },
      report: { type: 'string' },
      failures: { type: 'string' },
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
let devnet
try {
  devnet = values.devnet === undefined ? undefined : readDevnetFile(path.resolve(values.devnet))
} catch (error) {
  fail(`--devnet: ${(error as Error).message}`)
}
let overlordKey = devnet?.keys.overlord
for (const entry of values.key ?? []) {
  const [name, hex] = [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]
  if (name !== 'overlord' || !/^0x[0-9a-fA-F]{64}$/.test(hex)) fail(`--key expects overlord=0x<64 hex>, got ${JSON.stringify(entry)}`)
  overlordKey = hex as `0x${string}`
}
const reports: { json?: string; junit?: string; text?: string } = {}
for (const part of values.report?.split(',') ?? []) {
  const at = part.indexOf('=')
  const [kind, file] = at < 0 ? ['json', part] : [part.slice(0, at), part.slice(at + 1)]
  if ((kind !== 'json' && kind !== 'junit' && kind !== 'text') || !file) fail(`--report expects json=<file>,junit=<file>,text=<file>, got ${JSON.stringify(part)}`)
  reports[kind] = path.resolve(file)
}
const payers: Record<string, Payer> = {}
if (devnet?.keys.payer) {
  for (const rpc of devnet.chains) {
    const network = await evmNetworkOf(rpc).catch((error: Error) => fail(`--devnet: ${rpc}: ${error.message}`))
    payers[network] = evmPayer(rpc, network, privateKeyToAccount(devnet.keys.payer))
  }
}
const seed = integer('seed', values.seed, 0) ?? Math.floor(Math.random() * 2 ** 31)
const count = integer('count', values.count, 1)!
const seconds = integer('seconds', values.seconds, 1)!
const maxResponseMs = integer('max-response-time', values['max-response-time'], 1)
process.stdout.write(`fuzz: seed ${seed}; at most ${count} drawn requests in ${seconds} s; gateway ${gateway ?? '-'}; model server ${modelserver ?? '-'}\n`)
const report = await fuzz({
  urls: { gateway, modelserver },
  seed,
  count,
  seconds,
  overlord: overlordKey ? privateKeyToAccount(overlordKey) : undefined,
  concurrency: integer('concurrency', values.concurrency, 1),
  only: integer('only', values.only, 0),
  maxResponseMs,
  payers,
  registry: devnet?.vars.registry,
  wallets: devnet?.keys.payer ? [privateKeyToAccount(devnet.keys.payer)] : [],
  chainsPerRoot: integer('chains', values.chains, 0),
  knownFailures: KNOWN_FAILURES,
})
const text = formatFuzzText(report)
process.stdout.write(`${text}\n`)
const failuresDir = path.resolve(values.failures ?? DEFAULT_FAILURES_DIR)
for (const [i, v] of report.violations.entries()) {
  const file = writeFailureFile(failuresDir, fuzzCase(v, seed, { gateway, modelserver }, maxResponseMs ?? 30_000))
  if (i < 10) process.stdout.write(`failure written: ${file} (npm run conformance -- --replay ${file})\n`)
}
if (report.violations.length > 10) process.stdout.write(`… and ${report.violations.length - 10} more failure files in ${failuresDir}\n`)
const outputs: [string | undefined, string][] = [
  [reports.json, `${JSON.stringify(report, null, 2)}\n`],
  [reports.junit, formatFuzzJunit(report)],
  [reports.text, `${text}\n`],
]
for (const [file, content] of outputs) {
  if (!file) continue
  mkdirSync(path.dirname(file), { recursive: true })
  writeFileSync(file, content)
}
process.exit(report.violations.length ? 1 : 0)
