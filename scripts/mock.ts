/**
 * `npm run mock` — Prism mocks of both OpenAPI documents for front-end work offline:
 * gateway on :4010, model server on :4011 (override with MOCK_GATEWAY_PORT / MOCK_MODELSERVER_PORT).
 * Prism comes from node_modules/.bin. SIGINT / SIGTERM stop both mocks and wait for them to exit, as does the end of
 * whatever launched it (SIGTERM to `npm` itself).
 *
 * `startPrism` is also used by the spec tests (on free ports).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createServer } from 'node:net'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { watchAncestors } from '../devnet/watchAncestors.js'
import { repoRoot } from './generate.js'

export interface PrismMock {
  url: string
  port: number
  child: ChildProcess
  /** Output seen so far (for diagnostics). */
  output: () => string
  stop: () => Promise<void>
}

/** Asks the OS for a free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

/**
 * Starts `prism mock <spec>` on 127.0.0.1:<port> and resolves once it listens.
 * Rejects (and kills the process) when Prism exits or does not listen within `timeoutMs`.
 */
export async function startPrism(
  spec: string,
  port: number,
  options: { timeoutMs?: number; echo?: (line: string) => void; args?: string[] } = {},
): Promise<PrismMock> {
  const bin = path.join(repoRoot, 'node_modules', '.bin', 'prism')
  const child = spawn(
    bin,
    ['mock', path.resolve(repoRoot, spec), '--port', String(port), '--host', '127.0.0.1', ...(options.args ?? [])],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' } },
  )
  let output = ''
  let exited = false
  const exitPromise = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true
      resolve()
    })
  })
  const stop = async () => {
    if (exited) return
    child.kill('SIGTERM')
    const timer = setTimeout(() => {
      if (!exited) child.kill('SIGKILL')
    }, 5_000)
    await exitPromise
    clearTimeout(timer)
  }
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop().then(() => reject(new Error(`prism did not start on ${port} for ${spec}:\n${output}`)))
    }, options.timeoutMs ?? 60_000)
    const onData = (chunk: Buffer) => {
      const text = chunk.toString('utf8')
      output += text
      if (options.echo) for (const line of text.split('\n')) if (line.trim() !== '') options.echo(line)
      if (output.includes('Prism is listening')) {
        clearTimeout(timer)
        resolve()
      }
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onData)
    void exitPromise.then(() => {
      clearTimeout(timer)
      reject(new Error(`prism exited before listening (${spec}):\n${output}`))
    })
  })
  return { url: `http://127.0.0.1:${port}`, port, child, output: () => output, stop }
}

const invokedDirectly =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href

if (invokedDirectly) {
  const targets = [
    { name: 'gateway', spec: 'openapi/gateway.yaml', port: Number(process.env.MOCK_GATEWAY_PORT ?? 4010) },
    { name: 'modelserver', spec: 'openapi/modelserver.yaml', port: Number(process.env.MOCK_MODELSERVER_PORT ?? 4011) },
  ]
  const mocks: PrismMock[] = []
  let stopping = false
  const shutdown = async (code: number) => {
    if (stopping) return
    stopping = true
    await Promise.all(mocks.map((m) => m.stop()))
    process.exit(code)
  }
  process.on('SIGINT', () => void shutdown(0))
  process.on('SIGTERM', () => void shutdown(0))
  // SIGTERM to `npm run mock` ends npm's `sh` but not tsx and us: stop when a launcher disappears
  watchAncestors(() => void shutdown(0))
  try {
    for (const t of targets) {
      if (!existsSync(path.join(repoRoot, t.spec))) {
        console.warn(`mock: ${t.spec} does not exist — skipped`)
        continue
      }
      const mock = await startPrism(t.spec, t.port, { echo: (line) => console.log(`[${t.name}] ${line}`) })
      mocks.push(mock)
      // A mock that dies on its own takes the other one down with it.
      mock.child.once('exit', (code) => {
        if (!stopping) {
          console.error(`mock: ${t.name} exited (${code ?? 'signal'})`)
          void shutdown(1)
        }
      })
      console.log(`mock: ${t.name} on ${mock.url}`)
    }
    if (mocks.length === 0) await shutdown(1)
  } catch (error) {
    console.error(error instanceof Error ? error.message : error)
    await shutdown(1)
  }
}
