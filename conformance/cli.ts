/**
 * The conformance CLI (`conformance/run.ts` runs it with the process's arguments and streams):
 * `npm run conformance -- --gateway <url> --modelserver <url> [--devnet <devnet.json>] [--hooks <url> --hooks-token <t>]
 *   [--chain <rpc>]… [--algod <url> --algod-token <t>] [--key name=0x…]… [--machine <name|file>]… [--mock]
 *   [--report junit=<file>,json=<file>] [--seed n] [--var name=value]… [--failures <dir>]
 * `npm run conformance -- --replay <failure file> [the same secrets flags]`
 *
 * Replays the documented state machines against a deployment (exit 0: no row failed; 1: a row failed;
 * 2: bad arguments). `--help` explains every flag.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts'
import { algorandPayer, type AlgorandPayerOptions } from './algorandPayer.js'
import { readDevnetFile } from './devnetFile.js'
import { evmNetworkOf, evmPayer } from './evmPayer.js'
import { HooksClient } from './hooksClient.js'
import { formatJson, formatJunit, formatText } from './report.js'
import { Credentials } from './fuzz/Credentials.js'
import { DEFAULT_FAILURES_DIR, type FailureCase, readFailureFile, replayFuzz, replayRow, rowCase, writeFailureFile } from './replay.js'
import { loadMachine, MACHINES, runMachine } from './runner.js'
import type { Payer, RowResult, Target } from './types.js'

const HELP = `Usage: npm run conformance -- [options]

Replays the documented state machines (${Object.keys(MACHINES).length}: ${Object.keys(MACHINES).join(', ')})
against a deployment, checking every response against openapi/gateway.yaml or openapi/modelserver.yaml.
Each row passes, fails, or is skipped with the reason (a key, URL, hook or payer the target lacks).

Options:
  --gateway <url>          the gateway (e.g. http://127.0.0.1:8000)
  --modelserver <url>      the model server (e.g. http://127.0.0.1:11434)
  --devnet <devnet.json>   against \`npm start\`: the overlord TEST key, payers, chains, algod and model registry of
                           the devnet it started (<SERVICE_DATA_DIR>/devnet.json); the flags below win
  --hooks <url>            the deployment's test hooks port (SERVICE_TEST_HOOKS=1; \`npm start -- --test-hooks\`):
                           clock, restart, proof file and fault rows run too
  --hooks-token <token>    its bearer token (or CONFORMANCE_HOOKS_TOKEN)
  --chain <rpc>            an EVM JSON-RPC the payer pays on (repeatable; the network is read from the RPC)
  --algod <url>            an algod the Algorand payer pays through (with --algod-token and --key algorand=…)
  --algod-token <token>    its X-Algo-API-Token
  --key <name>=0x<hex>     a signing key (repeatable): overlord (the shadow tier's test key), payer (x402 on EVM);
                           algorand=<25-word mnemonic> (x402 on Algorand)
  --machine <name|file>    only this machine (repeatable; a name above or a YAML file)
  --mock                   the target is a Prism mock (\`npm run mock\`): only rows that hold on a stateless mock;
                           URLs default to http://127.0.0.1:4010 and :4011
  --report junit=<file>,json=<file>   also write a JUnit XML and/or a JSON report
  --seed <n>               seed of every generated wallet, name and file (default: random, printed)
  --failures <dir>         where each failed row is written as a replayable file (default ./${DEFAULT_FAILURES_DIR})
  --replay <file>          run a failure file again (a failed row, or a violation \`npm run fuzz\` wrote): exit 1
                           while it still fails, 0 once it holds; URLs from the file unless given, secrets as flags
  --var <name>=<value>     a machine variable (repeatable), e.g. model=llama3.2:1b
  -h, --help               this text

Exit status: 0 no row failed, 1 a row failed, 2 bad arguments.
Without --hooks, rows needing a hook (clock, restart, proof_file, faults) are skipped with the reason.
`

class UsageError extends Error {}

function pairs(list: string[] | undefined, flag: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const entry of list ?? []) {
    const at = entry.indexOf('=')
    if (at <= 0) throw new UsageError(`--${flag} expects name=value, got ${JSON.stringify(entry)}`)
    out.set(entry.slice(0, at), entry.slice(at + 1))
  }
  return out
}

function url(value: string | undefined, flag: string): string | undefined {
  if (value === undefined) return undefined
  try {
    const parsed = new URL(value)
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error()
    return value.replace(/\/+$/, '')
  } catch {
    throw new UsageError(`--${flag} expects an http(s) URL, got ${JSON.stringify(value)}`)
  }
}

type Parsed = {
  target: Target
  machines: string[] | undefined
  seed: number
  reports: { junit?: string; json?: string }
  failures: string
  replay: FailureCase | undefined
  chains: string[]
  algorand: AlgorandPayerOptions | undefined
  hooks: { url: string; token: string } | undefined
}

/** The command line as `node:util`'s parseArgs reads it; an unknown or malformed option is a usage error. */
function readOptions(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        gateway: { type: 'string' },
        target: { type: 'string' },
        modelserver: { type: 'string' },
        devnet: { type: 'string' },
        hooks: { type: 'string' },
        'hooks-token': { type: 'string' },
        chain: { type: 'string', multiple: true },
        algod: { type: 'string' },
        'algod-token': { type: 'string' },
        key: { type: 'string', multiple: true },
        machine: { type: 'string', multiple: true },
        mock: { type: 'boolean', default: false },
        report: { type: 'string' },
        seed: { type: 'string' },
        failures: { type: 'string' },
        replay: { type: 'string' },
        var: { type: 'string', multiple: true },
        help: { type: 'boolean', short: 'h', default: false },
      },
    })
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
}

/**
 * The named signing keys: the devnet file's, then `--key name=0x…` (a later one replaces an earlier one). Named
 * by the caller, so kept in an object without a prototype.
 */
function readKeys(fromDevnet: Record<string, string>, given: Map<string, string>): Record<string, PrivateKeyAccount> {
  const keys = Object.create(null) as Record<string, PrivateKeyAccount>
  for (const [name, hex] of [...Object.entries(fromDevnet), ...given]) {
    if (!/^0x[0-9a-fA-F]{64}$/.test(hex)) throw new UsageError(`--key ${name}= expects 0x and 64 hex digits`)
    try {
      keys[name] = privateKeyToAccount(hex as `0x${string}`)
    } catch {
      throw new UsageError(`--key ${name}= is not a valid secp256k1 private key`)
    }
  }
  return keys
}

function parse(argv: string[]): Parsed | 'help' {
  const { values } = readOptions(argv)
  if (values.help) return 'help'
  const mock = values.mock
  let replay: FailureCase | undefined
  if (values.replay !== undefined) {
    try {
      replay = readFailureFile(path.resolve(values.replay))
    } catch (error) {
      throw new UsageError(`--replay: ${(error as Error).message.split('\n')[0]}`)
    }
  }
  let gateway = url(values.gateway ?? values.target ?? replay?.urls.gateway, 'gateway')
  let modelserver = url(values.modelserver ?? replay?.urls.modelserver, 'modelserver')
  if (mock && !gateway && !modelserver) {
    gateway = 'http://127.0.0.1:4010'
    modelserver = 'http://127.0.0.1:4011'
  }
  if (!gateway && !modelserver) throw new UsageError('give --gateway <url> and/or --modelserver <url> (or --mock, or --replay <file>)')
  let devnet: ReturnType<typeof readDevnetFile> | undefined
  if (values.devnet !== undefined) {
    try {
      devnet = readDevnetFile(path.resolve(values.devnet))
    } catch (error) {
      throw new UsageError(`--devnet: ${(error as Error).message}`)
    }
  }
  const given = pairs(values.key, 'key')
  const algorandMnemonic = given.get('algorand')
  given.delete('algorand')
  const keys = readKeys(devnet?.keys ?? {}, given)
  const machines = values.machine?.map((m) => {
    try {
      loadMachine(m)
      return m
    } catch (error) {
      throw new UsageError(`--machine ${m}: ${(error as Error).message.split('\n')[0]}`)
    }
  })
  const reports: Parsed['reports'] = {}
  for (const part of values.report?.split(',') ?? []) {
    const [kind, file] = [part.slice(0, part.indexOf('=')), part.slice(part.indexOf('=') + 1)]
    if ((kind !== 'junit' && kind !== 'json') || !file || part.indexOf('=') < 0) throw new UsageError(`--report expects junit=<file>,json=<file>, got ${JSON.stringify(part)}`)
    reports[kind] = path.resolve(file)
  }
  let seed = Math.floor(Math.random() * 2 ** 31)
  if (values.seed !== undefined) {
    if (!/^\d{1,15}$/.test(values.seed)) throw new UsageError(`--seed expects a non-negative integer, got ${JSON.stringify(values.seed)}`)
    seed = Number(values.seed)
  }
  const chains = (values.chain ?? devnet?.chains ?? []).map((c) => url(c, 'chain')!)
  if (chains.length && !keys.payer) throw new UsageError('--chain needs --key payer=0x… (the account that pays)')
  let algorand = devnet?.algorand
  if (values.algod !== undefined || algorandMnemonic !== undefined) {
    const algodUrl = url(values.algod ?? algorand?.algodUrl, 'algod')
    const algodToken = values['algod-token'] ?? algorand?.algodToken
    const mnemonic = algorandMnemonic ?? algorand?.mnemonic
    if (!algodUrl || algodToken === undefined || !mnemonic) throw new UsageError('the Algorand payer needs --algod <url>, --algod-token <token> and --key algorand=<25-word mnemonic>')
    if (mnemonic.trim().split(/\s+/).length !== 25) throw new UsageError('--key algorand= expects a 25-word Algorand mnemonic')
    algorand = { algodUrl, algodToken, mnemonic: mnemonic.trim() }
  }
  const hooksUrl = url(values.hooks, 'hooks')
  const hooksToken = values['hooks-token'] ?? process.env.CONFORMANCE_HOOKS_TOKEN
  if (hooksUrl && !hooksToken) throw new UsageError('--hooks needs --hooks-token <token> (or CONFORMANCE_HOOKS_TOKEN)')
  const target: Target = {
    urls: { gateway, modelserver },
    mock,
    keys,
    vars: { ...(replay?.kind === 'row' ? replay.vars : {}), ...devnet?.vars, ...Object.fromEntries(pairs(values.var, 'var')) },
    hooks: { login: Boolean(gateway) && !mock },
  }
  const failures = path.resolve(values.failures ?? DEFAULT_FAILURES_DIR)
  return { target, machines, seed, reports, failures, replay, chains, algorand, hooks: hooksUrl ? { url: hooksUrl, token: hooksToken! } : undefined }
}

/** Where the CLI writes: the process's streams, or a test's capture. */
export type ConformanceIo = { stdout: (text: string) => void; stderr: (text: string) => void }

/** Runs the CLI on `argv`; resolves with its exit status (0 no row failed, 1 a row failed, 2 bad arguments). */
export async function conformanceCli(argv: string[], io: ConformanceIo): Promise<number> {
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(argv)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    io.stderr(`conformance: ${error.message}\nRun with --help for usage.\n`)
    return 2
  }
  if (parsed === 'help') {
    io.stdout(HELP)
    return 0
  }
  const { target, machines, seed, reports, failures, replay, chains, algorand, hooks } = parsed
  const payers: Record<string, Payer> = {}
  const rpcs: Record<string, string> = {}
  for (const rpc of chains) {
    let network: string
    try {
      network = await evmNetworkOf(rpc)
    } catch (error) {
      io.stderr(`conformance: --chain ${rpc}: ${(error as Error).message}\n`)
      return 2
    }
    payers[network] = evmPayer(rpc, network, target.keys.payer!)
    rpcs[network] = rpc
  }
  if (algorand) payers['algorand:*'] = algorandPayer(algorand)
  if (Object.keys(payers).length) target.hooks.chain = { payers, rpcs }
  if (hooks) {
    try {
      Object.assign(target.hooks, await new HooksClient(hooks.url, hooks.token).hooks())
    } catch (error) {
      io.stderr(`conformance: --hooks ${hooks.url}: ${(error as Error).message}\n`)
      return 2
    }
  }
  if (replay) {
    io.stdout(`conformance: replaying ${replay.kind === 'row' ? `row ${replay.row}${replay.variant ? ` [${replay.variant}]` : ''} of ${replay.machine.machine}` : `${replay.check} (${replay.steps.length} request${replay.steps.length === 1 ? '' : 's'})`}; gateway ${target.urls.gateway ?? '-'}; model server ${target.urls.modelserver ?? '-'}\n`)
    const outcome =
      replay.kind === 'row'
        ? await replayRow(replay, target)
        : await replayFuzz(replay, { urls: target.urls, credentials: new Credentials(target.urls.gateway, target.keys.overlord, replay.seed) })
    io.stdout(`${outcome.text}\n`)
    return outcome.reproduced ? 1 : 0
  }
  io.stdout(`conformance: seed ${seed}; gateway ${target.urls.gateway ?? '-'}; model server ${target.urls.modelserver ?? '-'}${target.mock ? ' (mock)' : ''}\n`)
  const results: RowResult[] = []
  const written: string[] = []
  for (const name of machines ?? Object.keys(MACHINES)) {
    const machine = loadMachine(name)
    for (const result of await runMachine(machine, target, { seed })) {
      results.push(result)
      if (result.outcome === 'failed') written.push(writeFailureFile(failures, rowCase(machine, result, seed, target)))
    }
  }
  io.stdout(`${formatText(results)}\nseed ${seed} (rerun with --seed ${seed})\n`)
  for (const file of written) io.stdout(`failure written: ${file} (npm run conformance -- --replay ${file})\n`)
  const meta = { seed, target: { ...target.urls, mock: Boolean(target.mock) }, hooks: Object.keys(target.hooks).filter((h) => target.hooks[h as keyof Target['hooks']]) }
  for (const [kind, file] of Object.entries(reports)) {
    mkdirSync(path.dirname(file), { recursive: true })
    writeFileSync(file, kind === 'junit' ? formatJunit(results) : formatJson(results, meta))
  }
  return results.some((r) => r.outcome === 'failed') ? 1 : 0
}

