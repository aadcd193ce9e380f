/**
 * Starting the whole system for browser tests, free of any vitest import so the browser project's globalSetup
 * (sharedSystem.ts, which runs outside the test workers) can use it; test files call startSystem.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { DevnetInfo } from '../../../devnet/startDevnet.js'
import { retryOnAddressInUse } from '../../../conformance/testSupport/retryOnAddressInUse.js'

const root = resolve(import.meta.dirname, '../../..')

export type System = {
  /** The gateway's origin as the browser uses it (`http://127.0.0.1:<port>`, also `SERVICE_PUBLIC_ORIGIN`). */
  url: string
  /** The model server's origin. */
  modelServerUrl: string
  dataDir: string
  /** `<dataDir>/devnet.json`: peers, chains, funded payer keys, the overlord TEST key (`shadow.overlord`). */
  devnet: DevnetInfo
  /** Everything the system printed so far (prefixed lines from `scripts/start.ts`). */
  output: () => string
  close: () => Promise<void>
}

export type StartSystemParameters = {
  /** Extra environment for the gateway and model server (wins over the devnet's). */
  env?: Record<string, string>
  /** Deploy the service contracts on local Base (StorageAttest, batches) as `npm start` does. Default false. */
  contracts?: boolean
}

export const freePort = () =>
  new Promise<number>((res, rej) => {
    const s = createServer()
    s.once('error', rej)
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => res(port))
    })
  })

/** Files of the handoff folder: the system's output as it comes, its description once up, or why it failed. */
export const sharedSystemFiles = (handoff: string) => ({
  log: join(handoff, 'system.log'),
  ready: join(handoff, 'system.json'),
  failed: join(handoff, 'system.error'),
})

export type SharedSystemInfo = Pick<System, 'url' | 'modelServerUrl' | 'dataDir' | 'devnet'>

export const describeSharedSystem = (s: System): SharedSystemInfo => ({ url: s.url, modelServerUrl: s.modelServerUrl, dataDir: s.dataDir, devnet: s.devnet })

/**
 * Starts a system of its own; `log` also receives everything it prints (the shared system's output file). Started
 * again on other ports when one it picked was taken before its server bound it (retryOnAddressInUse).
 */
export async function spawnSystem(p: StartSystemParameters & { log?: string } = {}): Promise<System> {
  return await retryOnAddressInUse(() => spawnSystemOnce(p))
}

async function spawnSystemOnce(p: StartSystemParameters & { log?: string }): Promise<System> {
  const dataDir = mkdtempSync(join(tmpdir(), 'browser-system-'))
  const port = await freePort()
  const modelPort = await freePort()
  const url = `http://127.0.0.1:${port}`
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SERVICE_DATA_DIR: dataDir,
    DEVNET_FREE_PORTS: '1',
    DEVNET_CONTRACTS: p.contracts ? '1' : '0',
    DEVNET_BLOCK_INTERVAL_MS: '500',
    SERVICE_HOST: '127.0.0.1',
    SERVICE_PORT: String(port),
    SERVICE_PUBLIC_ORIGIN: url,
    MODELSERVER_PORT: String(modelPort),
    SERVICE_RATE_LIMIT__MAX: '100000',
    LOG_LEVEL: 'warn',
    // A response that breaks the document becomes a 500 — a failed request checkPage reports.
    SERVICE_HTTP__RESPONSE_VALIDATION: 'error',
    ...p.env,
  }
  delete env.SERVICE_X402__FACILITATOR_URL
  delete env.VITEST // the servers are not tests
  delete env.VITEST_WORKER_ID
  delete env.VITEST_POOL_ID
  const proc: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  const keep = (c: Buffer) => {
    out += c.toString()
    if (p.log) appendFileSync(p.log, c)
  }
  proc.stdout?.on('data', keep)
  proc.stderr?.on('data', keep)
  const exited = new Promise<void>((r) => proc.once('exit', () => r()))
  const close = async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM')
      const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000)
      await exited
      clearTimeout(timer)
    }
    rmSync(dataDir, { recursive: true, force: true })
  }
  const t0 = Date.now()
  while (!/\[start\] up in/.test(out)) {
    if (proc.exitCode !== null || /\[start\] .*stopping/.test(out) || Date.now() - t0 > 180_000) {
      await close()
      throw new Error(`the system did not come up:\n${out}`)
    }
    await new Promise((r) => setTimeout(r, 200))
  }
  // A server that did not bind its port (EADDRINUSE: taken since freePort) leaves `npm start` up without it.
  for (const server of ['gateway', 'modelserver']) {
    if (!out.includes(`${server} answers`)) {
      await close()
      throw new Error(`the ${server} did not start:\n${out}`)
    }
  }
  const devnet = JSON.parse(readFileSync(join(dataDir, 'devnet.json'), 'utf8')) as DevnetInfo
  return { url, modelServerUrl: `http://127.0.0.1:${modelPort}`, dataDir, devnet, output: () => out, close }
}
