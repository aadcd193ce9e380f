/**
 * Test-only: the whole system as `npm start` runs it (scripts/start.ts: devnet, model server, gateway), on
 * free ports and a fresh data directory — never the fixed ports of `npm start`, which other people use —
 * and the Prism mocks as `npm run mock` runs them (scripts/mock.ts), on free ports too.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { DevnetInfo } from '../../devnet/startDevnet.js'
import { freePort } from '../../scripts/mock.js'
import { repoRoot } from '../DocumentClient.js'
import { retryOnAddressInUse } from './retryOnAddressInUse.js'

export type RunningSystem = { gateway: string; modelserver: string; devnet: DevnetInfo; dataDir: string; output: () => string; close: () => Promise<void> }

async function stopProcess(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()))
  proc.kill('SIGTERM')
  const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000)
  await exited
  clearTimeout(timer)
}

function launch(script: string, env: NodeJS.ProcessEnv): { proc: ChildProcess; output: () => string } {
  const merged: NodeJS.ProcessEnv = { ...process.env, ...env }
  // A configured facilitator would make start.ts skip the devnet.
  delete merged.SERVICE_X402__FACILITATOR_URL
  const proc = spawn(process.execPath, ['--import', 'tsx', script], { cwd: repoRoot, env: merged, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  const keep = (c: Buffer) => {
    out += c.toString()
    if (out.length > 2_000_000) out = out.slice(-1_000_000)
  }
  proc.stdout?.on('data', keep)
  proc.stderr?.on('data', keep)
  return { proc, output: () => out }
}

async function until(what: string, ok: () => boolean, proc: ChildProcess, output: () => string, timeoutMs: number): Promise<void> {
  const t0 = Date.now()
  while (!ok()) {
    if (proc.exitCode !== null) throw new Error(`${what} exited:\n${output().slice(-4000)}`)
    if (Date.now() - t0 > timeoutMs) throw new Error(`${what} did not come up in ${timeoutMs} ms:\n${output().slice(-4000)}`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

/** `npm start` on free ports; `env` is added to its environment (the caller's settings win in start.ts). */
export async function startSystem(env: Record<string, string> = {}): Promise<RunningSystem> {
  return await retryOnAddressInUse(() => startSystemOnce(env))
}

async function startSystemOnce(env: Record<string, string>): Promise<RunningSystem> {
  const dataDir = mkdtempSync(join(tmpdir(), 'conformance-system-'))
  const gatewayPort = await freePort()
  const modelPort = await freePort()
  const childEnv: NodeJS.ProcessEnv = { SERVICE_DATA_DIR: dataDir, DEVNET_FREE_PORTS: '1', SERVICE_PORT: String(gatewayPort), MODELSERVER_PORT: String(modelPort), ...env }
  const { proc, output } = launch('scripts/start.ts', childEnv)
  try {
    // the last line npm start prints once up (its lines reach the pipes in separate writes: "up in" alone, read
    // under load, was once all there was of them when the test looked for the command)
    await until('npm start', () => /\[start\] conformance: .*\n/.test(output()), proc, output, 180_000)
  } catch (error) {
    await stopProcess(proc)
    rmSync(dataDir, { recursive: true, force: true })
    throw error
  }
  const devnet = JSON.parse(readFileSync(join(dataDir, 'devnet.json'), 'utf8')) as DevnetInfo
  return {
    gateway: `http://127.0.0.1:${gatewayPort}`,
    modelserver: `http://127.0.0.1:${modelPort}`,
    devnet,
    dataDir,
    output,
    close: async () => {
      await stopProcess(proc)
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

type RunningMocks = { gateway: string; modelserver: string; close: () => Promise<void> }

/** `npm run mock` on free ports. */
export async function startMocks(): Promise<RunningMocks> {
  return await retryOnAddressInUse(startMocksOnce)
}

async function startMocksOnce(): Promise<RunningMocks> {
  const gatewayPort = await freePort()
  const modelPort = await freePort()
  const { proc, output } = launch('scripts/mock.ts', { MOCK_GATEWAY_PORT: String(gatewayPort), MOCK_MODELSERVER_PORT: String(modelPort) })
  try {
    await until('npm run mock', () => output().includes(`mock: modelserver on`), proc, output, 120_000)
  } catch (error) {
    await stopProcess(proc)
    throw error
  }
  return { gateway: `http://127.0.0.1:${gatewayPort}`, modelserver: `http://127.0.0.1:${modelPort}`, close: () => stopProcess(proc) }
}
