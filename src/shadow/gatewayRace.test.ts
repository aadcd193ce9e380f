/**
 * Two real gateway processes (`src/main.ts`, each its own Node process, pool and data dir) on ONE PostgreSQL
 * race to consume the same signed challenges over HTTP: every nonce is accepted exactly once (200 from one
 * process, 409 `nonce_consumed` from the other).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nodeArgsFor } from '../../scripts/nodeArgsFor.js'
import { createTestDatabase, type TestDatabase } from '../../tests/support/testDatabase.js'
import { tempDir, testOverlord } from '../../tests/support/shadowFixtures.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const overlord = testOverlord()
const secret = randomBytes(32).toString('hex')
let database: TestDatabase
const children: ChildProcess[] = []

function startGateway(name: string): Promise<string> {
  const dataDir = tempDir(`race-${name}-`)
  const child = spawn(process.execPath, nodeArgsFor('src/main.ts'), {
    cwd: root,
    env: {
      ...process.env,
      SERVICE_PROFILE: 'devnet',
      SERVICE_PORT: '0',
      SERVICE_HOST: '127.0.0.1',
      SERVICE_DATA_DIR: dataDir,
      SERVICE_DATABASE_URL: database.url,
      SERVICE_PUBLIC_ORIGIN: 'http://gw.test',
      SERVICE_RATE_LIMIT__MAX: '100000',
      SHADOW_OVERLORD_ADDRESS: overlord.account.address,
      SHADOW_JWT_SECRET: secret,
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  return new Promise((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => reject(new Error(`${name} did not start: ${out}`)), 60_000)
    const onData = (d: Buffer) => {
      out += d.toString()
      const match = /"port":(\d+)/.exec(out)
      if (match && out.includes('gateway listening')) {
        clearTimeout(timer)
        resolve(`http://127.0.0.1:${match[1]}`)
      }
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    child.on('exit', (code) => reject(new Error(`${name} exited ${code}: ${out}`)))
  })
}

const post = async (url: string, path: string, body: unknown) => {
  const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  return { status: res.status, body: (await res.json()) as { error?: string; nonce?: string; message?: string } }
}

describe('two gateway processes on one PostgreSQL', () => {
  let a: string
  let b: string
  beforeAll(async () => {
    database = await createTestDatabase('postgres')
    ;[a, b] = await Promise.all([startGateway('a'), startGateway('b')])
  }, 120_000)

  afterAll(async () => {
    for (const child of children) {
      if (child.exitCode === null) {
        child.kill('SIGTERM')
        await new Promise((resolve) => child.once('exit', resolve))
      }
    }
    await database?.close()
  })

  it('each nonce is accepted exactly once', async () => {
    const items: { nonce: string; signature: string }[] = []
    for (let i = 0; i < 60; i++) {
      // Challenges issued by either process are visible to both (shared table).
      const c = await post(i % 2 ? a : b, '/admin/shadow/challenge', { scope: 'auth' })
      expect(c.status).toBe(200)
      items.push({ nonce: c.body.nonce!, signature: await overlord.account.signMessage({ message: c.body.message! }) })
    }
    const outcomes = await Promise.all(items.map((item) => Promise.all([post(a, '/admin/shadow/verify', item), post(b, '/admin/shadow/verify', item)])))
    let winsA = 0
    for (const [ra, rb] of outcomes) {
      expect([ra.status, rb.status].sort()).toEqual([200, 409])
      expect([ra, rb].find((r) => r.status === 409)!.body.error).toBe('nonce_consumed')
      if (ra.status === 200) winsA++
    }
    // eslint-disable-next-line no-console
    console.info(`race: ${items.length} nonces, process A won ${winsA}, process B won ${items.length - winsA}`)
  })
})
