/**
 * `npm start` with no configuration: devnet up, servers started when present, and SIGTERM / Ctrl-C leave
 * no process behind. Free ports throughout (DEVNET_FREE_PORTS=1 and free SERVICE_PORT / MODELSERVER_PORT).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { alive, commandOf, descendants, waitGone } from '../devnet/testing/processTree.js'

const root = resolve(import.meta.dirname, '..')
const procs: ChildProcess[] = []
const dirs: string[] = []
afterAll(() => {
  for (const p of procs) if (p.pid && alive(p.pid)) p.kill('SIGKILL')
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const freePort = () =>
  new Promise<number>((res) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => res(port))
    })
  })

async function launch() {
  const dataDir = mkdtempSync(join(tmpdir(), 'npm-start-'))
  dirs.push(dataDir)
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SERVICE_DATA_DIR: dataDir,
    DEVNET_FREE_PORTS: '1',
    SERVICE_PORT: String(await freePort()),
    MODELSERVER_PORT: String(await freePort()),
  }
  delete env.SERVICE_X402__FACILITATOR_URL
  const t0 = Date.now()
  const proc = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  procs.push(proc)
  let out = ''
  proc.stdout?.on('data', (c: Buffer) => (out += c.toString()))
  proc.stderr?.on('data', (c: Buffer) => (out += c.toString()))
  while (!/\[start\] (up in|.*stopping)/.test(out)) {
    if (Date.now() - t0 > 150_000 || proc.exitCode !== null) throw new Error(`npm start did not come up:\n${out}`)
    await new Promise((r) => setTimeout(r, 200))
  }
  return { proc, dataDir, out: () => out }
}

describe('npm start', () => {
  it('SIGKILL of npm start still leaves no process behind (exitWithParent + guardian for servers, watchdog for Anvil)', async () => {
    const { proc, out } = await launch()
    const tree = descendants(proc.pid as number)
    expect(tree.length).toBeGreaterThanOrEqual(4) // 2 Anvil + watchdogs, servers when present
    if (existsSync(join(root, 'src/main.ts'))) expect(out()).toContain('gateway answers')
    proc.kill('SIGKILL')
    const left = await waitGone(tree, 15_000)
    expect(left.map((p) => `${p} ${commandOf(p)}`)).toEqual([])
  })

  it('brings the devnet (and whatever servers exist) up, then SIGTERM stops everything', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'npm-start-'))
    dirs.push(dataDir)
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      SERVICE_DATA_DIR: dataDir,
      DEVNET_FREE_PORTS: '1',
      SERVICE_PORT: String(await freePort()),
      MODELSERVER_PORT: String(await freePort()),
    }
    delete env.SERVICE_X402__FACILITATOR_URL
    const t0 = Date.now()
    const proc = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
    procs.push(proc)
    let out = ''
    proc.stdout?.on('data', (c: Buffer) => (out += c.toString()))
    proc.stderr?.on('data', (c: Buffer) => (out += c.toString()))
    while (!/\[start\] (up in|.*stopping)/.test(out)) {
      if (Date.now() - t0 > 150_000 || proc.exitCode !== null) throw new Error(`npm start did not come up:\n${out}`)
      await new Promise((r) => setTimeout(r, 200))
    }
    console.log(`npm start (free ports): ${/\[start\] (up in \d+ ms[^\n]*)/.exec(out)?.[1] ?? out.slice(-400)}`)
    expect(out).toMatch(/\[start\] devnet up in \d+ ms/)
    const info = JSON.parse(readFileSync(join(dataDir, 'devnet.json'), 'utf8')) as { env: Record<string, string> }
    expect(info.env.SERVICE_X402__FACILITATOR_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    if (existsSync(join(root, 'src/main.ts'))) expect(out).toContain('[gateway]')

    const tree = descendants(proc.pid as number)
    expect(tree.filter((p) => /^\S*anvil-linux-amd64\/bin\/anvil /.test(commandOf(p)))).toHaveLength(2)
    proc.kill('SIGTERM')
    await new Promise((r) => (proc.exitCode !== null ? r(null) : proc.once('exit', r)))
    expect(await waitGone([...tree, proc.pid as number], 10_000)).toEqual([])
    expect(out).toContain('[start] stopped')
  })
})
