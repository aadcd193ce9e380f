/**
 * Test helper: the gateway as a real process (`src/main.ts`, from the compiled build when it is up to date: `scripts/nodeArgsFor.ts`), so a
 * test can `kill -9` it. In the devnet profile unless `env` says otherwise (the tests run against local peers). Resolves once it logs its listening line; `output` keeps everything it wrote.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import path from 'node:path'
import { nodeArgsFor } from '../../scripts/nodeArgsFor.js'

const root = path.resolve(import.meta.dirname, '..', '..')

export type SpawnedGateway = {
  child: ChildProcess
  port: number
  url: string
  output: () => string
  /** SIGKILL, as a crash: no shutdown, nothing flushed. */
  crash: () => Promise<void>
  /** SIGTERM and wait for the exit (clean shutdown). */
  stop: () => Promise<void>
}

export async function spawnGateway(env: Record<string, string>, { timeoutMs = 90_000 } = {}): Promise<SpawnedGateway> {
  const child = spawn(process.execPath, nodeArgsFor('src/main.ts'), {
    cwd: root,
    env: { ...process.env, SERVICE_PROFILE: 'devnet', SERVICE_HOST: '127.0.0.1', SERVICE_PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start in ${timeoutMs} ms:\n${output}`)), timeoutMs)
    child.stdout!.on('data', () => {
      const match = /gateway listening on http:\/\/localhost:(\d+)/.exec(output)
      if (match) {
        clearTimeout(timer)
        resolve(Number(match[1]))
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`gateway exited ${code}:\n${output}`))
    })
  }).catch(async (error) => {
    if (child.exitCode === null) child.kill('SIGKILL')
    throw error
  })
  const gone = () => child.exitCode !== null || child.signalCode !== null
  return {
    child,
    port,
    url: `http://127.0.0.1:${port}`,
    output: () => output,
    crash: async () => {
      if (!gone()) child.kill('SIGKILL')
      await exited
    },
    stop: async () => {
      if (!gone()) child.kill('SIGTERM')
      await exited
    },
  }
}
