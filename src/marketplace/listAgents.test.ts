import { afterEach, describe, expect, it } from 'vitest'
import { createTestDatabase, dialects, type TestDatabase } from '../../tests/support/testDatabase.js'
import { agentDefinitions } from './agents.js'
import { Marketplace } from './Marketplace.js'

describe.each(dialects)('Marketplace.listAgents on %s', (dialect) => {
  let database: TestDatabase | undefined
  afterEach(async () => {
    await database?.close()
    database = undefined
  })

  it('lists every agent at its latest revision (one query for all), revision 1 where none was evolved', async () => {
    database = await createTestDatabase(dialect)
    const marketplace = new Marketplace({
      db: database.db,
      chatModel: 'chat:latest',
      embedModel: 'embed:latest',
      now: () => 1_800_000_000,
    })
    const before = await marketplace.listAgents()
    expect(before.map((a) => a.id)).toEqual(agentDefinitions.map((a) => a.id))
    expect(before.every((a) => a.revision === 1 && a.model === 'chat:latest')).toBe(true)

    const [first, second] = agentDefinitions
    const row = (agent: string, revision: number, model: string) => ({ agent, revision, instructions: `r${revision}`, model, created_at: 1, wallet: null })
    await database.db
      .insertInto('agent_revisions')
      .values([row(first!.id, 2, 'm2'), row(first!.id, 3, 'm3'), row(second!.id, 2, 'other')])
      .execute()
    const after = await marketplace.listAgents()
    expect(after.find((a) => a.id === first!.id)).toMatchObject({ revision: 3, model: 'm3' })
    expect(after.find((a) => a.id === second!.id)).toMatchObject({ revision: 2, model: 'other' })
    expect(after.filter((a) => a.revision === 1)).toHaveLength(agentDefinitions.length - 2)
    expect(await marketplace.getAgent(first!.id)).toEqual(after.find((a) => a.id === first!.id))
  })
})
