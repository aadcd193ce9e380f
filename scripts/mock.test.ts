/** `npm run mock` as a user runs it: SIGTERM to npm itself (a supervisor, `kill <npm's pid>`) leaves no mock behind. */
import { spawn } from 'node:child_process'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { commandOf, descendants, waitGone } from '../devnet/testing/processTree.js'
import { freePort } from './mock.js'

const root = resolve(import.meta.dirname, '..')

describe('npm run mock', () => {
  it('SIGTERM to npm stops both Prism mocks and frees their ports', async () => {
    const env = { ...process.env, MOCK_GATEWAY_PORT: String(await freePort()), MOCK_MODELSERVER_PORT: String(await freePort()) }
    const npm = spawn('npm', ['run', '--silent', 'mock'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    npm.stdout.on('data', (c: Buffer) => (out += c.toString()))
    npm.stderr.on('data', (c: Buffer) => (out += c.toString()))
    const t0 = Date.now()
    while (!out.includes('mock: modelserver on')) {
      if (npm.exitCode !== null || Date.now() - t0 > 120_000) throw new Error(`npm run mock did not come up:\n${out}`)
      await new Promise((r) => setTimeout(r, 200))
    }
    const tree = descendants(npm.pid!)
    expect(tree.length).toBeGreaterThanOrEqual(3) // sh, tsx's node, two Prisms
    npm.kill('SIGTERM')
    const left = await waitGone(tree, 15_000)
    const named = left.map((p) => `${p} ${commandOf(p)}`)
    for (const p of left) process.kill(p, 'SIGKILL') // none when it works; not left running when it does not
    expect(named).toEqual([])
    for (const port of [env.MOCK_GATEWAY_PORT, env.MOCK_MODELSERVER_PORT]) {
      await expect(fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2_000) })).rejects.toThrow()
    }
  }, 180_000)
})
