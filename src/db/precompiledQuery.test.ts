import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, dialects, type TestDatabase } from '../../tests/support/testDatabase.js'
import { precompiledQuery } from './precompiledQuery.js'

describe.each(dialects)('precompiledQuery on %s', (dialect) => {
  let database: TestDatabase
  beforeAll(async () => {
    database = await createTestDatabase(dialect)
    await database.db
      .insertInto('agent_revisions')
      .values([1, 2, 3].map((revision) => ({ agent: revision === 3 ? 'b' : 'a', revision, instructions: `i${revision}`, model: 'm', created_at: 1, wallet: null })))
      .execute()
  })
  afterAll(() => database.close())

  it('runs the compiled query with each call\'s values, keeping constant parameters', async () => {
    const revisionsOf = precompiledQuery<never, [string, number], { revision: number }>(database.db as never, 2, (db, agent, min) =>
      (db as unknown as typeof database.db)
        .selectFrom('agent_revisions')
        .select('revision')
        .where('agent', '=', agent!)
        .where('revision', '>=', min as unknown as number)
        .where('model', '=', 'm')
        .orderBy('revision'),
    )
    expect((await revisionsOf('a', 1)).map((r) => Number(r.revision))).toEqual([1, 2])
    expect((await revisionsOf('a', 2)).map((r) => Number(r.revision))).toEqual([2])
    expect((await revisionsOf('b', 0)).map((r) => Number(r.revision))).toEqual([3])
    expect(await revisionsOf("a' or '1'='1", 0)).toEqual([])
  })

  it('refuses a placeholder that is not a bound parameter', () => {
    expect(() => precompiledQuery(database.db, 1, (db) => db.selectFrom('agent_revisions').select('agent'))).toThrow(/not bound/)
  })
})
