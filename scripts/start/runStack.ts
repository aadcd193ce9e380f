/**
 * What `npm start` runs once its checks passed (scripts/start.ts describes it all): the devnet unless the peers
 * are configured, the model server and the gateway as children, their output relayed, and their stop.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { privateKeyToAccount } from 'viem/accounts'
import type { DevnetPorts } from '../../devnet/ports.js'
import { devnetTable } from '../../devnet/devnetTable.js'
import { startDevnet, type Devnet, type DevnetInfo } from '../../devnet/startDevnet.js'
import { watchAncestors } from '../../devnet/watchAncestors.js'
import { seedDemoCabinet } from '../demoCabinet.js'
import { gatewayNodeFlags } from '../gatewayNodeFlags.js'
import { nodeArgsFor } from '../nodeArgsFor.js'
import { conformanceCommand, testHooksSettings } from '../startTestHooks.js'
import { readShadowConfig } from '../../src/shadow/config.js'
import { unlockMessageFor } from '../../src/vault/Vault.js'
import { wrapText } from '../../src/cli/wrapText.js'
import { writeFileAtomic } from '../../src/vault/writeFileAtomic.js'
import { withDevnetEnv } from './devnetEnv.js'
import { plannedPorts, type StartPlan } from './plan.js'
import { updateDataDirLock } from '../../src/shared/dataDirLock/dataDirLock.js'

const root = resolve(import.meta.dirname, '../..')
/** Milliseconds since this process started. */
const sinceStart = () => Math.round(performance.now())
const num = (v: string | undefined) => (v && /^\d+$/.test(v) ? Number(v) : undefined)
/** A line of npm start's own, wrapped to 80 columns with the prefix on each. */
const say = (text: string) => process.stdout.write(wrapText(text, 80 - '[start] '.length).map((l) => `[start] ${l}\n`).join(''))

interface Child {
  name: string
  proc: ChildProcess
  exited: Promise<number | null>
  /** Set once it answered its readiness URL (`waitHttp`). */
  answered: boolean
  /** The ports it reported listening on (scripts/reportListening.mjs). */
  listening: Set<number>
}
const children: Child[] = []
let devnet: Devnet | undefined
let stopping = false

async function stop(reason: string, code: number): Promise<never> {
  if (!stopping) {
    stopping = true
    say(`${reason}: stopping`)
    const force = setTimeout(() => {
      for (const c of children) c.proc.kill('SIGKILL')
    }, 5_000)
    for (const c of children) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGTERM')
    await Promise.all(children.map((c) => c.exited))
    clearTimeout(force)
    await devnet?.close()
    guard('done')
    guardian.stdin?.end()
    say('stopped')
    process.exit(code)
  }
  return new Promise<never>(() => undefined)
}
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => void stop(sig, 0))
// SIGTERM to `npm start` kills npm's `sh` but not tsx or us: stop when a launcher disappears.
watchAncestors((why) => void stop(why, 0))

/**
 * Guardian: a detached `sh` (its own session, so Ctrl-C to our group does not reach it) that reads child pids
 * on its stdin. `done` means a clean stop; EOF without it means we died: SIGTERM every child, then 5 s later
 * SIGKILL those still running (checked by their command line, so a reused pid is never hit).
 */
const GUARD = [
  'trap "" INT TERM HUP',
  'pids=""',
  'while read -r line; do [ "$line" = done ] && exit 0; pids="$pids $line"; done',
  'for p in $pids; do kill -TERM "$p" 2>/dev/null; done',
  'sleep 5',
  'for p in $pids; do grep -q exitWithParent "/proc/$p/cmdline" 2>/dev/null && kill -KILL "$p" 2>/dev/null; done',
  'exit 0',
].join('\n')
const guardian = spawn('/bin/sh', ['-c', GUARD], { stdio: ['pipe', 'ignore', 'ignore'], detached: true })
guardian.unref()
;(guardian.stdin as unknown as { unref?: () => void } | null)?.unref?.()
guardian.stdin?.on('error', () => undefined)
const guard = (line: string) => guardian.stdin?.write(`${line}\n`)

/** How often a server that crashed is started again: at most this many times within `RESTART_WINDOW_MS`. */
const MAX_RESTARTS = 5
const RESTART_WINDOW_MS = 10 * 60_000
const restarts = new Map<string, number[]>()

/**
 * Starts a server. When it exits on its own: `stop` (the gateway) stops everything; `restart` (the model server,
 * whose native inference may crash) starts it again after a second — as Ollama restarts a crashed runner — if it
 * had answered `readyUrl` (one that never did failed to start: a setting it refuses, a port taken), at most
 * `MAX_RESTARTS` times in `RESTART_WINDOW_MS`; otherwise the rest keeps running without it. Each exit is said with
 * its code or signal. `ready` resolves once it answers `readyUrl`.
 */
function run(name: string, file: string, childEnv: NodeJS.ProcessEnv, onExit: 'stop' | 'restart', readyUrl: string, nodeFlags: readonly string[] = []): Child & { ready: Promise<boolean> } {
  const proc = spawn(process.execPath, [...nodeFlags, '--import', './scripts/exitWithParent.mjs', '--import', './scripts/reportListening.mjs', ...nodeArgsFor(file)], {
    cwd: root,
    env: { ...childEnv, PAY2STORE_EXIT_WITH_PARENT: '1', PAY2STORE_REPORT_LISTENING: '1' },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  })
  if (proc.pid) guard(String(proc.pid))
  for (const [stream, out] of [
    [proc.stdout, process.stdout],
    [proc.stderr, process.stderr],
  ] as const) {
    if (stream) createInterface({ input: stream }).on('line', (l) => out.write(`[${name}] ${l}\n`))
  }
  const exited = new Promise<number | null>((res) =>
    proc.once('exit', (code, signal) => {
      res(code)
      if (stopping) return
      const how = signal ?? code
      if (onExit === 'stop') {
        say(`${name} exited (${how}); stopping everything`)
        void stop(`${name} exited`, code || 1)
        return
      }
      const now = Date.now()
      const recent = (restarts.get(name) ?? []).filter((at) => now - at < RESTART_WINDOW_MS)
      if (!child.answered) return say(`${name} exited (${how}) before it answered; the rest keeps running`)
      if (recent.length >= MAX_RESTARTS) return say(`${name} exited (${how}), its ${MAX_RESTARTS + 1}th exit in ${RESTART_WINDOW_MS / 60_000} minutes; not started again, the rest keeps running`)
      recent.push(now)
      restarts.set(name, recent)
      say(`${name} exited (${how}); starting it again (${recent.length} of ${MAX_RESTARTS} restarts in ${RESTART_WINDOW_MS / 60_000} minutes)`)
      setTimeout(() => {
        if (!stopping) void run(name, file, childEnv, onExit, readyUrl, nodeFlags).ready.catch((e: unknown) => say((e as Error).message))
      }, 1_000)
    }),
  )
  const child: Child = { name, proc, exited, answered: false, listening: new Set() }
  proc.on('message', (m: unknown) => {
    const port = (m as { listening?: unknown } | null)?.listening
    if (typeof port === 'number') child.listening.add(port)
  })
  children.push(child)
  return { ...child, ready: waitHttp(child, readyUrl, 120_000) }
}

/**
 * Resolves true once `child` listens on `url`'s port (it said so itself: whatever else may hold the port is not
 * it) and answers `url` with a success; false if it exits first or the start is stopping.
 */
async function waitHttp(child: Child, url: string, timeoutMs: number): Promise<boolean> {
  const start = Date.now()
  const port = Number(new URL(url).port)
  let gone = false
  void child.exited.then(() => (gone = true))
  while (Date.now() - start < timeoutMs) {
    if (stopping || gone) return false
    try {
      if (!child.listening.has(port)) throw new Error('not listening yet')
      const res = await fetch(url, { signal: AbortSignal.timeout(1_000) })
      await res.arrayBuffer()
      if (!res.ok) throw new Error(`answered ${res.status}`)
      say(`${child.name} answers ${url} (${sinceStart()} ms after start)`)
      child.answered = true
      return true
    } catch {
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  throw new Error(`${child.name} did not answer ${url} within ${timeoutMs} ms`)
}

/** The ports the devnet listens on, read from its URLs (it may have chosen free ones). */
function devnetPortsOf(info: DevnetInfo): DevnetPorts {
  const port = (url: string | undefined) => Number(url ? new URL(url).port : 0)
  return {
    base: port(info.chains['eip155:8453']?.rpcUrl),
    mainnet: port(info.chains['eip155:1']?.rpcUrl),
    facilitator: port(info.facilitator?.url),
    upstream: port(info.storage.paymentUrl),
    arweave: port(info.storage.gatewayUrl),
    algod: port(info.algorand.url),
    registry: port(info.registry?.url),
  }
}

/**
 * Flow A's unlock proof for the devnet overlord, signed over the unlock message of the gateway as it will be
 * configured (same origin, same proof path: read through the gateway's own `readShadowConfig`).
 */
async function writeDevnetUnlockProof(shadow: DevnetInfo['shadow'], gatewayEnv: NodeJS.ProcessEnv): Promise<void> {
  let cfg: ReturnType<typeof readShadowConfig>
  try {
    cfg = readShadowConfig(gatewayEnv)
  } catch (e) {
    say(`shadow-overlord tier misconfigured (${(e as Error).message}): no unlock proof written`)
    return
  }
  const overlord = privateKeyToAccount(shadow.overlord.privateKey)
  if (cfg.overlordAddress?.toLowerCase() !== overlord.address.toLowerCase()) {
    say(`SHADOW_OVERLORD_ADDRESS is not the devnet overlord: no unlock proof written`)
    return
  }
  const message = unlockMessageFor(cfg.publicOrigin)
  const proof = { address: overlord.address, signature: await overlord.signMessage({ message }), message }
  const path = resolve(root, cfg.unlockProofPath)
  await writeFileAtomic(path, `${JSON.stringify(proof, null, 2)}\n`, 0o600)
  say(`admin tier: overlord ${overlord.address} (devnet TEST key, in devnet.json \`shadow\`); the vault starts sealed — POST /vault/credentials/reunlock with a bearer and no body unlocks it (proof ${path})`)
}

/** Starts the devnet (unless configured), the model server and the gateway as `plan` says; returns once they answer. */
export async function runStack(plan: StartPlan): Promise<void> {
  const env = process.env
  const { dataDir, gatewayPort, modelPort } = plan
  let devnetEnv: Record<string, string> = {}
  if (plan.devnet === 'configured') {
    say('SERVICE_X402__FACILITATOR_URL is set: using the configured peers, no devnet')
  } else {
    try {
      devnet = await startDevnet({
        dataDir,
        ports: plan.devnet,
        blockIntervalMs: num(env.DEVNET_BLOCK_INTERVAL_MS),
        deployContracts: process.env.DEVNET_CONTRACTS !== '0',
        roundIntervalMs: num(env.DEVNET_ROUND_INTERVAL_MS),
        log: (l) => process.stdout.write(`[devnet] ${l}\n`),
      })
    } catch (e) {
      process.stderr.write(`[devnet] failed to start: ${(e as Error).message}\n`)
      process.exit(1)
    }
    // one block, unprefixed: a key of 66 characters fits 80 columns only without `[devnet] ` before it
    process.stdout.write(`${devnetTable(devnet.info)}\n`)
    say(`devnet up in ${sinceStart()} ms → ${devnet.file}`)
    updateDataDirLock(dataDir, plannedPorts({ ...plan, devnet: devnetPortsOf(devnet.info) }, env).filter((p) => p.port > 0))
    // the devnet profile: the servers may fall back to the devnet's addresses (a production start never does)
    devnetEnv = { ...devnet.info.env, SERVICE_PROFILE: 'devnet' }
    void devnet.contractsReady.then((c) => {
      if (c && !stopping) say(`service contracts deployed (${sinceStart()} ms after start): the gateway's daily receipt batch and StorageAttest use them`)
    })
  }

  const serverEnv = withDevnetEnv(devnetEnv, {
    SERVICE_DATA_DIR: dataDir,
    SERVICE_PORT: String(gatewayPort),
    MODELSERVER_PORT: String(modelPort),
    SERVICE_LLM__MODELSERVER__BASE_URL: `http://127.0.0.1:${modelPort}`,
  })

  if (devnet) {
    try {
      await writeDevnetUnlockProof(devnet.info.shadow, serverEnv)
    } catch (e) {
      say(`could not write the devnet unlock proof: ${(e as Error).message}`)
    }
    // A company cabinet for /boardroom, through the admin tier, before the gateway starts (its vault stays sealed).
    try {
      if ((await seedDemoCabinet({ env: serverEnv, overlordKey: devnet.info.shadow.overlord.privateKey })) === 'provisioned') say('demo cabinet ACME provisioned through the admin tier: /boardroom convenes it')
    } catch (e) {
      say(`demo cabinet not provisioned: ${(e as Error).message}`)
    }
  }

  const testHooks = await testHooksSettings(process.argv.slice(2), env)
  const waits: Promise<boolean>[] = []
  if (nodeArgsFor('src/main.ts')[0]!.startsWith('dist')) say('the model server and the gateway run from dist/ (the build is newer than every source)')
  if (plan.startsModelServer) {
    waits.push(run('modelserver', 'src/modelserver/main.ts', serverEnv, 'restart', `http://127.0.0.1:${modelPort}/`).ready)
  } else say('src/modelserver/main.ts not found: model server not started')
  if (plan.startsGateway) {
    // The heap flags of `npm run serve` (scripts/gatewayNodeFlags.ts).
    waits.push(run('gateway', 'src/main.ts', { ...serverEnv, ...testHooks?.env }, 'stop', `http://127.0.0.1:${gatewayPort}/health`, gatewayNodeFlags).ready)
  } else say('src/main.ts not found: gateway not started')

  try {
    const ok = await Promise.all(waits)
    if (!stopping) {
      const up = children.filter((_c, i) => ok[i]).map((c) => c.name)
      say(`up in ${sinceStart()} ms: devnet${up.length ? `, ${up.join(', ')}` : ''}${up.includes('gateway') ? ` — gateway http://127.0.0.1:${gatewayPort}` : ''} — Ctrl-C stops everything`)
      if (testHooks) say(`test hooks on ${testHooks.url} (loopback; the token is in the command below)`)
      // one unwrapped line, so that it can be copied as it is
      process.stdout.write(`[start] conformance: ${conformanceCommand({ gateway: `http://127.0.0.1:${gatewayPort}`, modelserver: `http://127.0.0.1:${modelPort}`, devnetFile: devnet?.file, hooks: testHooks })}\n`)
    }
  } catch (e) {
    await stop((e as Error).message, 1)
  }
}
