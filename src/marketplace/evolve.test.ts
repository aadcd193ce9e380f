import { afterEach, describe, expect, it } from 'vitest'
import { createTestDatabase, dialects, type TestDatabase } from '../../tests/support/testDatabase.js'
import { Marketplace } from './Marketplace.js'
import type { MeteredModelServer } from '../cost/meter/index.js'

describe.each(dialects)('Marketplace.evolve on %s', (dialect) => {
  let database: TestDatabase | undefined
  afterEach(async () => {
    await database?.close()
    database = undefined
  })

  it('concurrent evolves of one agent all succeed, each with its own next revision (none answers 500)', async () => {
    database = await createTestDatabase(dialect)
    let calls = 0
    // Every evolve reads revision 1 before any of them inserts: the model answers only after all have asked.
    const server = {
      generate: async () => {
        const n = ++calls
        await new Promise((r) => setTimeout(r, 20))
        return { model: 'chat:latest', response: `instructions ${n}`, eval_count: 1 }
      },
    } as unknown as MeteredModelServer
    const marketplace = new Marketplace({ db: database.db, chatModel: 'chat:latest', embedModel: 'embed:latest', now: () => 1_800_000_000 })
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => marketplace.evolve('ceo', { goal: `goal ${i}` }, { server })))
    expect(results.map((r) => r.revision).sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7])
    expect(await marketplace.getAgent('ceo')).toMatchObject({ revision: 7 })
  })
})
