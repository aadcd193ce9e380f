import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Kysely } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ShadowTables } from '../db/migrations/0003_shadow.js'
import { NonceStore } from './NonceStore.js'
import { openNonceDatabase } from './openNonceDatabase.js'
import { ShadowChallenges } from './ShadowChallenges.js'
import { createPgTestSchema } from '../../tests/support/createPgTestSchema.js'
import { tempDir, testClock, testOverlord } from '../../tests/support/shadowFixtures.js'

type Backend = { name: string; open: () => Promise<{ db: Kysely<ShadowTables>; close: () => Promise<void> }> }

const backends: Backend[] = [
  {
    name: 'sqlite (SHADOW_NONCES_PATH file)',
    open: async () => {
      const path = join(tempDir(), 'nested', 'nonces.sqlite')
      const handle = await openNonceDatabase({ db: undefined as never, dialect: 'sqlite' }, path)
      expect(existsSync(path)).toBe(true)
      return handle
    },
  },
  {
    name: 'postgres (unique schema)',
    open: async () => {
      const { db, drop } = await createPgTestSchema()
      return { db, close: drop }
    },
  },
]

for (const backend of backends) {
  describe(`NonceStore on ${backend.name}`, () => {
    let db: Kysely<ShadowTables>
    let close: () => Promise<void>
    const clock = testClock()
    let store: NonceStore
    beforeAll(async () => {
      ;({ db, close } = await backend.open())
      store = new NonceStore(db, { now: clock.now })
    })
    afterAll(async () => close())

    const issue = () => store.issue('auth', {}, (nonce) => `msg ${nonce}`)

    it('issues 0x + 64 hex nonces valid 120 s and stores the message', async () => {
      const record = await issue()
      expect(record.nonce).toMatch(/^0x[0-9a-f]{64}$/)
      expect(record.nonce).toHaveLength(66)
      expect(record.expiresAt - record.issuedAt).toBe(120)
      expect((await store.get(record.nonce))?.message).toBe(`msg ${record.nonce}`)
    })

    it('marks a nonce consumed exactly once', async () => {
      const { nonce } = await issue()
      const results = await Promise.all(Array.from({ length: 10 }, () => store.markConsumed(nonce)))
      expect(results.filter(Boolean)).toHaveLength(1)
      expect((await store.get(nonce))?.consumedAt).toBe(clock.now())
    })

    it('refuses to consume at or after expiry', async () => {
      const { nonce, expiresAt } = await issue()
      expect(await store.markConsumed(nonce, expiresAt)).toBe(false)
      expect(await store.markConsumed(nonce, expiresAt - 1)).toBe(true)
    })

    it('prunes records 120 s after expiry on later operations', async () => {
      const { nonce } = await issue()
      clock.advance(120 + 119)
      await issue()
      expect(await store.get(nonce)).toBeDefined() // expired but kept: a late caller still gets 410
      clock.advance(1)
      await issue()
      expect(await store.get(nonce)).toBeUndefined()
    })
  })
}

describe('two gateway processes on one PostgreSQL', () => {
  it('race to consume the same 150 nonces: each accepted exactly once', async () => {
    const { schema, db, drop } = await createPgTestSchema()
    try {
      const overlord = testOverlord()
      const challenges = new ShadowChallenges(new NonceStore(db), () => overlord.account.address, 'http://race.test')
      const items: { nonce: string; signature: string }[] = []
      for (let i = 0; i < 150; i++) {
        const issued = await challenges.issue('auth', {})
        items.push({ nonce: issued.nonce, signature: await overlord.account.signMessage({ message: issued.message }) })
      }
      const worker = fileURLToPath(new URL('../../tests/support/nonceRaceWorker.ts', import.meta.url))
      const procs = [0, 1].map(() => {
        const child = spawn(process.execPath, ['--import', 'tsx', worker], { stdio: ['pipe', 'pipe', 'inherit'] })
        let out = ''
        const ready = new Promise<void>((resolve) => child.stdout.on('data', (d: Buffer) => ((out += d.toString()), out.includes('ready\n') && resolve())))
        const done = new Promise<{ accepted: string[]; rejected: Record<string, number> }>((resolve, reject) => {
          child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.split('\n').filter(Boolean).pop()!)) : reject(new Error(`worker exit ${code}`))))
        })
        child.stdin.write(`${JSON.stringify({ schema, overlord: overlord.account.address, items })}\n`)
        return { child, ready, done }
      })
      await Promise.all(procs.map((p) => p.ready))
      for (const p of procs) p.child.stdin.write('go\n')
      const [a, b] = await Promise.all(procs.map((p) => p.done))
      const all = [...a!.accepted, ...b!.accepted]
      expect(all).toHaveLength(items.length)
      expect(new Set(all).size).toBe(items.length)
      expect((a!.rejected.nonce_consumed ?? 0) + (b!.rejected.nonce_consumed ?? 0)).toBe(items.length)
      // Both processes did win some: the race was real.
      expect(Object.keys(a!.rejected).every((k) => k === 'nonce_consumed')).toBe(true)
      expect(Object.keys(b!.rejected).every((k) => k === 'nonce_consumed')).toBe(true)
    } finally {
      await drop()
    }
  })
})
