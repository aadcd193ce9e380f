/**
 * Child process of the PostgreSQL race test (src/shadow/NonceStore.test.ts): one "gateway process" with its own pool.
 * stdin: one JSON line `{schema, overlord, items: [{nonce, signature}]}`; prints `ready`, waits for a `go`
 * line, then consumes every item through the full consume path and prints `{accepted: [...], rejected: {...}}`.
 */
import { createInterface } from 'node:readline'
import type { Address } from 'viem'
import { NonceStore } from '../../src/shadow/NonceStore.js'
import { ShadowChallenges } from '../../src/shadow/ShadowChallenges.js'
import { ShadowError } from '../../src/overlord/ShadowError.js'
import { openPgInSchema } from './createPgTestSchema.js'

const lines = createInterface({ input: process.stdin })
const iterator = lines[Symbol.asyncIterator]()
const setup = JSON.parse((await iterator.next()).value as string) as { schema: string; overlord: Address; items: { nonce: string; signature: string }[] }
const db = openPgInSchema(setup.schema, 8)
const challenges = new ShadowChallenges(new NonceStore(db), () => setup.overlord, 'http://race.test')
await db.selectFrom('shadow_nonces').select('nonce').limit(1).execute() // warm the pool
process.stdout.write('ready\n')
await iterator.next()
const accepted: string[] = []
const rejected: Record<string, number> = {}
await Promise.all(
  [0, 1, 2, 3].map(async (lane) => {
    for (let i = lane; i < setup.items.length; i += 4) {
      const item = setup.items[i]!
      try {
        await challenges.consume({ scope: 'auth', nonce: item.nonce, signature: item.signature, params: {} })
        accepted.push(item.nonce)
      } catch (error) {
        const code = error instanceof ShadowError ? error.code : 'other'
        rejected[code] = (rejected[code] ?? 0) + 1
      }
    }
  }),
)
process.stdout.write(`${JSON.stringify({ accepted, rejected })}\n`)
await db.destroy()
lines.close()
