import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { CollectingEventSink, shadowTestConfig, tempDir, testOverlord } from '../../tests/support/shadowFixtures.js'
import { createDatabase, type DatabaseHandle } from '../db/createDatabase.js'
import { createShadowTier } from './createShadowTier.js'

const overlord = testOverlord()

describe('createShadowTier: closing one replica of several', () => {
  const handles: { close: () => unknown }[] = []
  afterEach(async () => {
    for (const h of handles.splice(0).reverse()) await h.close()
  })

  it('withdraws its published key before its vault locks, so no peer ever sees it as a locked replica to wrap the data key to', async () => {
    const dataDir = tempDir('tier-close-')
    const file = join(dataDir, 'gateway.sqlite')
    const database: DatabaseHandle = await createDatabase({ url: `sqlite:${file}` })
    handles.push(database)
    const now = Math.floor(Date.now() / 1000)
    await database.db
      .insertInto('gateway_instances')
      .values({ instance_id: 'gw-b', host: 'h', pid: 1, started_at: now, heartbeat_at: now, stopped_at: null, unlock_public_key: null, unlock_key_mac: null, vault_unlocked: 0 })
      .execute()
    const config = shadowTestConfig(dataDir, overlord)
    const tier = await createShadowTier({ config, database, events: new CollectingEventSink(), instance: { id: 'gw-b', heartbeatMs: 60_000, leaseS: 20 } })
    await tier.start()
    const challenge = await tier.overlord.challenge({ scope: 'auth', params: {} })
    const { jwt } = await tier.overlord.verify({ nonce: challenge.nonce, signature: await overlord.account.signMessage({ message: challenge.message }) })
    const message = tier.overlord.unlockMessage
    await tier.overlord.reunlock({ authorization: `Bearer ${jwt}` }, { address: overlord.account.address, signature: await overlord.account.signMessage({ message }), message })
    await tier.propagation!.round()
    // what a peer reads of this replica (another connection), at the moment its vault locks
    const peer = new Database(file, { readonly: true })
    handles.push(peer)
    const row = () => peer.prepare("SELECT unlock_public_key AS key, vault_unlocked AS unlocked FROM gateway_instances WHERE instance_id = 'gw-b'").get() as { key: string | null; unlocked: number }
    expect(row()).toMatchObject({ unlocked: 1, key: expect.any(String) })
    const seenAtLock: ReturnType<typeof row>[] = []
    const lock = tier.vault.lock.bind(tier.vault)
    tier.vault.lock = () => {
      seenAtLock.push(row())
      lock()
    }
    await tier.close()
    // locked with its key still published, a peer's round would wrap the data key to a replica about to go
    expect(seenAtLock).toEqual([{ key: null, unlocked: 0 }])
    expect(tier.vault.isUnlocked()).toBe(false)
    expect(row()).toEqual({ key: null, unlocked: 0 })
  })
})
