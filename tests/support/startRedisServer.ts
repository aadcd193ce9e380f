/**
 * Test helper: a Redis server of the test's own (Debian's `redis-server`, or `REDIS_SERVER_BIN`) on a free
 * loopback port, keeping nothing on disk, so a test can stop it (Redis down) and start it again on the same
 * port without touching the machine's shared Redis. `sharedRedisUrl` is that shared one (127.0.0.1:6379,
 * started by `.ci/run`), for tests that only need a Redis and keep to a key prefix of their own.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const sharedRedisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

export type TestRedis = {
  url: string
  port: number
  /** Stops the server (SIGKILL: Redis gone, as in a crash); `start` brings it back on the same port. */
  stop: () => Promise<void>
  start: () => Promise<void>
  close: () => Promise<void>
}

async function freePort(): Promise<number> {
  const s = createServer()
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
  const port = (s.address() as { port: number }).port
  await new Promise((r) => s.close(r))
  return port
}

export async function startRedisServer(): Promise<TestRedis> {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'test-redis-'))
  let child: ChildProcess | undefined
  const start = async () => {
    const c = spawn(process.env.REDIS_SERVER_BIN ?? 'redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    child = c
    let output = ''
    c.stdout!.on('data', (chunk) => (output += chunk))
    c.stderr!.on('data', (chunk) => (output += chunk))
    const deadline = Date.now() + 10_000
    while (!/Ready to accept connections/.test(output)) {
      if (c.exitCode !== null) throw new Error(`redis-server exited: ${output}`)
      if (Date.now() > deadline) throw new Error(`redis-server did not start: ${output}`)
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  const stop = async () => {
    const c = child
    if (!c || c.exitCode !== null || c.signalCode !== null) return
    const exited = new Promise<void>((r) => c.once('exit', () => r()))
    c.kill('SIGKILL')
    await exited
  }
  await start()
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop,
    start,
    close: async () => {
      await stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
