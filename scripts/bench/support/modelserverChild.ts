/**
 * A model server in a child process for the benchmarks (its own event loop and llama.cpp threads, as with
 * `npm run modelserver`): temporary store with the default tiny models, a free port, response validation `warn`.
 *
 *   npx tsx scripts/bench/support/modelserverChild.ts --threads 1     (prints `READY <url>`, stops when stdin closes)
 */
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

export type ServerChild = { url: string; pid: number; stop(): Promise<void> }

/**
 * Starts the server child with `threads` llama.cpp threads and waits until it listens. `nodeFlags` and `env`:
 * added to the child's (the benchmark's `--trace` preload and its file).
 */
export async function spawnModelServer(threads: number, extra: { nodeFlags?: string[]; env?: Record<string, string> } = {}): Promise<ServerChild> {
  const child = spawn(process.execPath, [...process.execArgv, ...(extra.nodeFlags ?? []), fileURLToPath(import.meta.url), '--threads', String(threads)], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, ...extra.env },
  })
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('READY ')) resolve(line.slice(6).trim())
    })
    child.once('exit', (code) => reject(new Error(`model server child exited with ${code}`)))
  })
  const exited = new Promise((r) => child.once('exit', r))
  return {
    url,
    pid: child.pid!,
    stop: async () => {
      child.stdin!.end()
      await exited
    },
  }
}

async function serve(threads: number): Promise<void> {
  const { createEngine } = await import('../../../src/modelserver/engine/createEngine.js')
  const { startTestModelServer } = await import('../../../tests/support/startTestModelServer.js')
  const engine = await createEngine({ threads })
  const server = await startTestModelServer({ engine, config: { threads }, responseValidation: 'warn' })
  console.log(`READY ${server.url}`)
  const stop = async () => {
    await server.close()
    await engine.dispose()
    process.exit(0)
  }
  process.stdin.on('end', () => void stop())
  process.stdin.resume()
  process.on('SIGTERM', () => void stop())
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({ options: { threads: { type: 'string', default: '1' } } })
  await serve(Number(values.threads))
}
