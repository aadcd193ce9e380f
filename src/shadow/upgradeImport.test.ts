import { cpSync, existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { recoverMessageAddress } from 'viem'
import { afterEach, describe, expect, it } from 'vitest'
import { createDatabase, type DatabaseHandle } from '../db/createDatabase.js'
import { CollectingEventSink, tempDir, testOverlord } from '../../tests/support/shadowFixtures.js'
import type { VaultFile } from '../vault/Vault.js'
import { readShadowConfig } from './config.js'
import { createShadowTier } from './createShadowTier.js'

/**
 * An operator upgrading a single server whose data directory still holds the vault, registry and agent-map
 * files: the first start on the database imports them, and after the usual unlock the cabinet signs.
 */
describe('first start after the upgrade: the data directory is imported into the database', () => {
  const overlord = testOverlord()
  const opened: DatabaseHandle[] = []
  afterEach(async () => {
    for (const d of opened.splice(0)) await d.close()
  })

  async function tierOn(dataDir: string) {
    const database = await createDatabase({ url: `sqlite:${join(dataDir, 'gateway.sqlite')}` })
    opened.push(database)
    const config = readShadowConfig({
      SERVICE_DATA_DIR: dataDir,
      SERVICE_PUBLIC_ORIGIN: 'http://gw.test',
      SHADOW_OVERLORD_ADDRESS: overlord.account.address,
      SHADOW_JWT_SECRET: overlord.jwtSecretHex,
    })
    return { database, tier: await createShadowTier({ config, database, events: new CollectingEventSink() }) }
  }

  it('vault entries (still sealed), registry and agent map are imported once; unlock then signs as before', async () => {
    // an "old" data directory: a cabinet's files as the file-backed tier wrote them (reconstructed from a tier)
    const before = tempDir('upgrade-old-')
    const { database: oldDb, tier: oldTier } = await tierOn(before)
    const message = oldTier.vault.unlockMessage
    const proof = { address: overlord.account.address, signature: await overlord.account.signMessage({ message }), message }
    await oldTier.vault.unlock(proof)
    const roster = (await oldTier.cabinets.provision('ACME')).soldiers
    const meta = await oldDb.db.selectFrom('vault_meta').selectAll().executeTakeFirstOrThrow()
    const entries = await oldDb.db.selectFrom('vault_entries').selectAll().execute()
    const file: VaultFile = {
      version: 1,
      vault_id: meta.vault_id,
      overlord_address: overlord.account.address,
      kdf: { alg: 'HKDF-SHA256', salt: meta.kdf_salt, info: meta.kdf_info },
      wrapped_data_key: { alg: 'AES-256-GCM', nonce: meta.wrapped_nonce, ciphertext: meta.wrapped_ciphertext },
      entries: Object.fromEntries(entries.map((e) => [e.entry_id, { context: e.context, nonce: e.nonce, ciphertext: e.ciphertext, created_at: Number(e.created_at) }])),
    }
    const dataDir = tempDir('upgrade-new-')
    for (const name of ['cabinet_registry.json', 'agent_map.json']) cpSync(join(before, name), join(dataDir, name))
    writeFileSync(join(dataDir, 'vault.json'), JSON.stringify(file))

    const { database, tier } = await tierOn(dataDir) // a fresh database: the import runs
    expect(existsSync(join(dataDir, 'vault.json.imported'))).toBe(true)
    expect(await database.db.selectFrom('vault_entries').select('entry_id').execute()).toHaveLength(16)
    expect((await tier.cabinets.roster('ACME')).members.slice(1).map((m) => m.address)).toEqual(roster.map((m) => m.address))
    expect((await tier.cabinets.preflight('ACME')).soldiers_with_address).toBe(7)
    await expect(tier.cabinets.sign(roster[1]!.entity_id, 'hello')).rejects.toThrow() // sealed until unlocked
    expect((await tier.vault.unlock(proof)).initialised).toBe(false)
    const signed = await tier.cabinets.sign(roster[1]!.entity_id, 'hello')
    expect(await recoverMessageAddress({ message: 'hello', signature: signed.signature })).toBe(roster[1]!.address)
    await tier.close()
    await oldTier.close()
  })
})
