import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, dialects, type TestDatabase } from '../../tests/support/testDatabase.js'
import { LlmKeys } from './LlmKeys.js'

const wallet = '0x00000000000000000000000000000000000000a1'

describe.each(dialects)('LLM API keys on %s', (dialect) => {
  let handle: TestDatabase
  let now = 1_795_000_000
  let commits = 0
  let keys: LlmKeys
  beforeAll(async () => {
    handle = await createTestDatabase(dialect)
    keys = new LlmKeys(handle.db, () => now, {
      commit: (write) => {
        commits++
        return write(handle.db)
      },
    })
  })
  afterAll(async () => {
    await handle?.close()
  })

  const lastUsed = async (keyId: string) => (await keys.list(wallet)).find((k) => k.key_id === keyId)?.last_used_at

  it('records a use to the minute: the first use of a key writes last_used_at, the rest of that minute writes nothing', async () => {
    const { key, key_id } = await keys.create(wallet, 'sdk')
    const before = commits
    for (let i = 0; i < 5; i++) expect(await keys.validate(key)).toEqual({ key_id, wallet })
    expect(commits - before).toBe(1) // not one commit per call
    expect(await lastUsed(key_id)).toBe(now)
    const first = now
    now += 59
    await keys.validate(key)
    expect(commits - before).toBe(1)
    expect(await lastUsed(key_id)).toBe(first)
    now += 1
    await keys.validate(key)
    expect(commits - before).toBe(2)
    expect(await lastUsed(key_id)).toBe(now)
  })

  it('still refuses a revoked key at once, within the minute of its last recorded use', async () => {
    const { key, key_id } = await keys.create(wallet, 'revoked soon')
    expect(await keys.validate(key)).toEqual({ key_id, wallet })
    await keys.revoke(wallet, key_id)
    expect(await keys.validate(key)).toBeUndefined()
  })
})
