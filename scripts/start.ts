/**
 * `npm start`: everything a newcomer needs, wired together.
 *
 * 1. Unless the gateway is already configured (SERVICE_X402__FACILITATOR_URL set), starts the devnet in this
 *    process (devnet/startDevnet.ts: Anvil 8453 + 1 with USDC, facilitator, storage upstream, Arweave gateway,
 *    algod) and writes `<SERVICE_DATA_DIR>/devnet.json`.
 * 2. Starts the model server (src/modelserver/main.ts) and the gateway (src/main.ts) — each only if its file
 *    exists — as child processes (`node`: from the compiled `dist/` when `npm run build` made it after every
 *    source was last changed, otherwise through tsx; scripts/nodeArgsFor.ts), with the environment built from devnet.json using
 *    docs/design.md's names (the caller's own environment wins), output forwarded line by line with prefixes.
 *    That environment includes the daily receipt batch (`SERVICE_BATCH__RPC_URL`, `SERVICE_BATCH__ATTESTOR_KEY`)
 *    and the verifier's StorageAttest (`SERVICE_STORAGE__ATTEST_RPC_URL`, `SERVICE_STORAGE__ATTESTOR_KEY`): the
 *    service key, which deploys the contracts on local Base and holds ATTESTOR_ROLE. The deployment runs in the
 *    background and is not waited for: the gateway reads the addresses from `contracts-8453.json` when it
 *    attests or batches, and retries an attestation made before the file exists.
 *    It also turns on the shadow-overlord (admin) tier: `SHADOW_OVERLORD_ADDRESS` is the devnet overlord's
 *    TEST key and `SHADOW_JWT_SECRET` the devnet's (both kept in `<SERVICE_DATA_DIR>/devnet/`), and flow A's
 *    unlock proof (the overlord's signature over the gateway's unlock message, `{address, signature,
 *    message}`) is written to `SHADOW_UNLOCK_PROOF_PATH` (default `<SERVICE_DATA_DIR>/vault_unlock_proof.json`)
 *    on every start, so `POST /vault/credentials/reunlock` with a bearer and no body unlocks the vault. The
 *    vault is still sealed after each start, as everywhere. A caller-set `SHADOW_OVERLORD_ADDRESS` of another
 *    key wins, and then no proof is written.
 * 3. Ctrl-C / SIGTERM / SIGHUP stop the servers (SIGTERM, then SIGKILL after 5 s) and the devnet. If this
 *    process dies without stopping them (SIGKILL), the servers get SIGTERM from scripts/exitWithParent.mjs
 *    and, as a backstop, from a detached guardian that SIGKILLs whatever is left 5 s later; Anvil has its own
 *    watchdog. (The gateway itself now exits on SIGTERM with its stdout gone — src/shared/logger.ts writes
 *    synchronously and drops output after EPIPE — so the guardian only covers a shutdown stuck elsewhere,
 *    e.g. in a native call of the model server.)
 *
 * 4. Once up, prints the conformance command against what it started; `--test-hooks` also opens the gateway's
 *    test hooks port (scripts/startTestHooks.ts) and the command uses it.
 *
 * Environment: SERVICE_DATA_DIR (default ./data), SERVICE_PORT (8000), MODELSERVER_PORT (11434),
 * DEVNET_FREE_PORTS=1 (devnet peers on free ports), DEVNET_BLOCK_INTERVAL_MS, DEVNET_ROUND_INTERVAL_MS.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { privateKeyToAccount } from 'viem/accounts'
import { devnetTable, startDevnet, type Devnet, type DevnetInfo } from '../devnet/startDevnet.js'
import { watchAncestors } from '../devnet/watchAncestors.js'
import { gatewayNodeFlags } from './gatewayNodeFlags.js'
import { nodeArgsFor } from './nodeArgsFor.js'
import { conformanceCommand, testHooksSettings } from './startTestHooks.js'
import { readShadowConfig } from '../src/shadow/config.js'
import { unlockMessageFor } from '../src/vault/Vault.js'
import { writeFileAtomic } from '../src/vault/writeFileAtomic.js'

const t0 = Date.now()
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const env = process.env
const dataDir = resolve(env.SERVICE_DATA_DIR?.trim() || join(root, 'data'))
const gatewayPort = Number(env.SERVICE_PORT?.trim() || 8000)
const modelPort = Number(env.MODELSERVER_PORT?.trim() || 11434)
const num = (v: string | undefined) => (v && /^\d+$/.test(v) ? Number(v) : undefined)
const say = (line: string) => process.stdout.write(`[start] ${line}\n`)

interface Child {
  name: string
  proc: ChildProcess
  exited: Promise<number | null>
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

/** Starts a server. A critical one (the gateway) that exits stops everything; others are only reported. */
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

function run(name: string, file: string, childEnv: NodeJS.ProcessEnv, critical: boolean, nodeFlags: readonly string[] = []): Child {
  const proc = spawn(process.execPath, [...nodeFlags, '--import', './scripts/exitWithParent.mjs', ...nodeArgsFor(file)], {
    cwd: root,
    env: { ...childEnv, PAY2STORE_EXIT_WITH_PARENT: '1' },
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
      if (!stopping && critical) {
        say(`${name} exited (${signal ?? code}); stopping everything`)
        void stop(`${name} exited`, code || 1)
      } else if (!stopping) {
        say(`${name} exited (${signal ?? code}); the rest keeps running`)
      }
      res(code)
    }),
  )
  const child = { name, proc, exited }
  children.push(child)
  return child
}

async function waitHttp(child: Child, url: string, timeoutMs: number): Promise<boolean> {
  const start = Date.now()
  let gone = false
  void child.exited.then(() => (gone = true))
  while (Date.now() - start < timeoutMs) {
    if (stopping || gone) return false
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1_000) })
      await res.arrayBuffer()
      say(`${child.name} answers ${url} (${Date.now() - t0} ms after start)`)
      return true
    } catch {
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  throw new Error(`${child.name} did not answer ${url} within ${timeoutMs} ms`)
}

const configured = Boolean(env.SERVICE_X402__FACILITATOR_URL?.trim())
let devnetEnv: Record<string, string> = {}
if (configured) {
  say('SERVICE_X402__FACILITATOR_URL is set: using the configured peers, no devnet')
} else {
  try {
    devnet = await startDevnet({
      dataDir,
      ports: env.DEVNET_FREE_PORTS === '1' ? 'free' : undefined,
      blockIntervalMs: num(env.DEVNET_BLOCK_INTERVAL_MS),
      deployContracts: process.env.DEVNET_CONTRACTS !== '0',
      roundIntervalMs: num(env.DEVNET_ROUND_INTERVAL_MS),
      log: (l) => process.stdout.write(`[devnet] ${l}\n`),
    })
  } catch (e) {
    process.stderr.write(`[devnet] failed to start: ${(e as Error).message}\n`)
    process.exit(1)
  }
  for (const l of devnetTable(devnet.info).split('\n')) process.stdout.write(`[devnet] ${l}\n`)
  say(`devnet up in ${Date.now() - t0} ms → ${devnet.file}`)
  devnetEnv = devnet.info.env
  void devnet.contractsReady.then((c) => {
    if (c && !stopping) say(`service contracts deployed (${Date.now() - t0} ms after start): the gateway's daily receipt batch and StorageAttest use them`)
  })
}

const serverEnv: NodeJS.ProcessEnv = {
  ...devnetEnv,
  SERVICE_DATA_DIR: dataDir,
  SERVICE_PORT: String(gatewayPort),
  MODELSERVER_PORT: String(modelPort),
  SERVICE_LLM__MODELSERVER__BASE_URL: `http://127.0.0.1:${modelPort}`,
  ...env, // the caller's own settings win
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
if (devnet) {
  try {
    await writeDevnetUnlockProof(devnet.info.shadow, serverEnv)
  } catch (e) {
    say(`could not write the devnet unlock proof: ${(e as Error).message}`)
  }
}

const testHooks = await testHooksSettings(process.argv.slice(2), env)
const waits: Promise<boolean>[] = []
if (nodeArgsFor('src/main.ts')[0]!.startsWith('dist')) say('the model server and the gateway run from dist/ (the build is newer than every source)')
const modelMain = join(root, 'src/modelserver/main.ts')
const gatewayMain = join(root, 'src/main.ts')
if (existsSync(modelMain)) {
  const c = run('modelserver', 'src/modelserver/main.ts', serverEnv, false)
  waits.push(waitHttp(c, `http://127.0.0.1:${modelPort}/`, 120_000))
} else say('src/modelserver/main.ts not found: model server not started')
if (existsSync(gatewayMain)) {
  // The heap flags of `npm run serve` (scripts/gatewayNodeFlags.ts).
  const c = run('gateway', 'src/main.ts', { ...serverEnv, ...testHooks?.env }, true, gatewayNodeFlags)
  waits.push(waitHttp(c, `http://127.0.0.1:${gatewayPort}/health`, 120_000))
} else say('src/main.ts not found: gateway not started')

try {
  const ok = await Promise.all(waits)
  if (!stopping) {
    const up = children.filter((_c, i) => ok[i]).map((c) => c.name)
    say(`up in ${Date.now() - t0} ms: devnet${up.length ? `, ${up.join(', ')}` : ''}${up.includes('gateway') ? ` — gateway http://127.0.0.1:${gatewayPort}` : ''} — Ctrl-C stops everything`)
    if (testHooks) say(`test hooks on ${testHooks.url} (loopback; the token is in the command below)`)
    say(`conformance: ${conformanceCommand({ gateway: `http://127.0.0.1:${gatewayPort}`, modelserver: `http://127.0.0.1:${modelPort}`, devnetFile: devnet?.file, hooks: testHooks })}`)
  }
} catch (e) {
  await stop((e as Error).message, 1)
}
