import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { nodeArgsFor } from '../../scripts/nodeArgsFor.js'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const children: ChildProcess[] = []

/** Starts `src/modelserver/main.ts` (what `npm run modelserver` runs) on a free port; resolves with its URL. */
async function start(modelsDir: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, nodeArgsFor('src/modelserver/main.ts'), {
    cwd: root,
    env: { ...process.env, MODELSERVER_PORT: '0', MODELSERVER_MODELS: modelsDir, MODELSERVER_THREADS: '1', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  children.push(child)
  const lines = createInterface({ input: child.stdout! })
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`exited ${code}`)))
    lines.on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; port?: number }
        if (entry.msg === 'model server listening' && entry.port) resolve(entry.port)
      } catch {
        /* not JSON */
      }
    })
  })
  return { url: `http://127.0.0.1:${port}`, child }
}

async function stop(child: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  child.kill('SIGTERM')
  return exited
}

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL')
})

describe('npm run modelserver', () => {
  it('installs the default models on first run and gives the same output for the same seed across restarts', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'modelserver-main-'))
    const body = JSON.stringify({ model: 'svc-tiny-chat', prompt: 'Once upon a time', stream: false, options: { seed: 42, num_predict: 12 } })
    const run = async () => {
      const { url, child } = await start(dir)
      const tags = (await (await fetch(`${url}/api/tags`)).json()) as { models: Array<{ name: string }> }
      const res = (await (await fetch(`${url}/api/generate`, { method: 'POST', body, headers: { 'content-type': 'application/json' } })).json()) as {
        response: string
      }
      expect(await stop(child)).toBe(0)
      return { names: tags.models.map((m) => m.name).sort(), response: res.response }
    }
    try {
      const first = await run()
      const second = await run()
      expect(first.names).toEqual(['svc-tiny-chat:latest', 'svc-tiny-embed:latest'])
      expect(first.response.length).toBeGreaterThan(0)
      expect(second.response).toBe(first.response)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
