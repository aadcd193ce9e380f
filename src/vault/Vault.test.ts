import { createCipheriv, randomBytes } from 'node:crypto'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Hex } from 'viem'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createDatabase, type DatabaseHandle } from '../db/createDatabase.js'
import { ShadowError } from '../overlord/ShadowError.js'
import { tempDir, testOverlord } from '../../tests/support/shadowFixtures.js'
import { importVaultFile, readUnlockProof, unlockMessageFor, Vault, type VaultFile } from './Vault.js'
import { gatewayCatalogue } from '../handlers/plugins.js'

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
const code = (c: string, status?: number) => (e: unknown) => e instanceof ShadowError && e.code === c && (status === undefined || gatewayCatalogue.toResult(e)?.status === status)

describe('Vault (machine 3.4)', () => {
  const overlord = testOverlord()
  const message = unlockMessageFor('http://vault.test')
  let database: DatabaseHandle
  let signature: Hex
  const opened: DatabaseHandle[] = []
  const openDatabase = async () => {
    const handle = await createDatabase({ url: `sqlite:${join(tempDir(), 'gateway.sqlite')}` })
    opened.push(handle)
    return handle
  }
  const newVault = (db = database.db) => new Vault({ db, overlordAddress: () => overlord.account.address, unlockMessage: message })

  beforeEach(async () => {
    database = await openDatabase()
    signature = await overlord.account.signMessage({ message })
  })
  afterEach(async () => {
    for (const handle of opened.splice(0)) await handle.close()
  })

  it('is locked at start; every entry operation fails 423 vault_locked', async () => {
    const vault = newVault()
    expect(vault.isUnlocked()).toBe(false)
    await expect(vault.list()).rejects.toThrow(ShadowError)
    await expect(vault.has('x')).rejects.toSatisfy(code('vault_locked', 423))
    await expect(vault.put('x', 'y', 'c')).rejects.toSatisfy(code('vault_locked', 423))
    await expect(vault.delete('x')).rejects.toSatisfy(code('vault_locked', 423))
    await expect(vault.withSecret('x', () => 1)).rejects.toSatisfy(code('vault_locked', 423))
  })

  it('first unlock initialises; entries round-trip; signing is deterministic so the same proof reopens after restart', async () => {
    const vault = newVault()
    expect(await vault.unlock({ address: overlord.account.address, signature, message })).toEqual({ vault_unlocked: true, initialised: true })
    await vault.put('a:pk', Buffer.from('secret-bytes'), 'cabinet_private_key')
    expect(await vault.withSecret('a:pk', (b) => b.toString())).toBe('secret-bytes')
    expect(signature).toBe(await overlord.account.signMessage({ message }))

    const restarted = newVault() // service restart: unlocked → locked
    expect(restarted.isUnlocked()).toBe(false)
    await expect(restarted.withSecret('a:pk', (b) => b.toString())).rejects.toSatisfy(code('vault_locked'))
    expect(await restarted.unlock({ address: overlord.account.address.toLowerCase(), signature, message })).toEqual({ vault_unlocked: true, initialised: false })
    expect(await restarted.withSecret('a:pk', (b) => b.toString())).toBe('secret-bytes')
  })

  it('stores AES-256-GCM entries with fresh 12-byte nonces, the entry id as AAD, and no plaintext in the database', async () => {
    const vault = newVault()
    await vault.unlock({ address: overlord.account.address, signature, message })
    await vault.put('one', 'same plaintext', 'c')
    await vault.put('two', 'same plaintext', 'c')
    const rows = await database.db.selectFrom('vault_entries').selectAll().orderBy('entry_id').execute()
    const meta = await database.db.selectFrom('vault_meta').selectAll().execute()
    const text = JSON.stringify([rows, meta])
    expect(text).not.toContain(Buffer.from('same plaintext').toString('hex'))
    expect(text).not.toContain('same plaintext')
    expect(text).not.toContain(signature.slice(2, 66))
    const [one, two] = rows
    expect(one!.nonce).toHaveLength(24)
    expect(one!.nonce).not.toBe(two!.nonce)
    expect(one!.ciphertext).not.toBe(two!.ciphertext)
    // Moving a ciphertext under another id fails authentication (AAD = entry id).
    await database.db.updateTable('vault_entries').set({ nonce: one!.nonce, ciphertext: one!.ciphertext }).where('entry_id', '=', 'two').execute()
    const reopened = newVault()
    await reopened.unlock({ address: overlord.account.address, signature, message })
    await expect(reopened.withSecret('two', (b) => b.toString())).rejects.toThrow()
    expect(await reopened.withSecret('one', (b) => b.toString())).toBe('same plaintext')
  })

  it('rejects a wrong unlock: 403 for another signer or a high-s twin, 400 for another message, 403 for a foreign vault', async () => {
    const vault = newVault()
    await vault.unlock({ address: overlord.account.address, signature, message })
    const locked = newVault()
    const other = testOverlord().account
    await expect(locked.unlock({ address: other.address, signature: await other.signMessage({ message }), message })).rejects.toSatisfy(code('bad_signature', 403))
    await expect(locked.unlock({ address: overlord.account.address, signature: await other.signMessage({ message }), message })).rejects.toSatisfy(code('bad_signature', 403))
    const s = BigInt(`0x${signature.slice(66, 130)}`)
    const twin = `0x${signature.slice(2, 66)}${(N - s).toString(16).padStart(64, '0')}${signature.endsWith('1b') ? '1c' : '1b'}`
    await expect(locked.unlock({ address: overlord.account.address, signature: twin, message })).rejects.toSatisfy(code('bad_signature', 403))
    const otherMessage = `${message} `
    await expect(
      locked.unlock({ address: overlord.account.address, signature: await overlord.account.signMessage({ message: otherMessage }), message: otherMessage }),
    ).rejects.toSatisfy(code('unlock_message_mismatch', 400))
    await expect(locked.unlock({})).rejects.toSatisfy(code('unlock_message_mismatch', 400))
    expect(locked.isUnlocked()).toBe(false)

    // A vault sealed under another overlord key: the current overlord's signature does not unwrap it.
    const foreignDb = (await openDatabase()).db
    const foreignKey = testOverlord().account
    const foreign = new Vault({ db: foreignDb, overlordAddress: () => foreignKey.address, unlockMessage: message })
    await foreign.unlock({ address: foreignKey.address, signature: await foreignKey.signMessage({ message }), message })
    const mine = new Vault({ db: foreignDb, overlordAddress: () => overlord.account.address, unlockMessage: message })
    await expect(mine.unlock({ address: overlord.account.address, signature, message })).rejects.toSatisfy(code('vault_unlock_failed', 403))
  })

  it('503 when no overlord address is configured', async () => {
    const vault = new Vault({ db: database.db, overlordAddress: () => undefined, unlockMessage: message })
    await expect(vault.unlock({ address: overlord.account.address, signature, message })).rejects.toSatisfy(code('overlord_not_configured', 503))
  })

  it('flow A reads the proof file; a missing file is 400', async () => {
    const proofPath = join(tempDir(), 'proof.json')
    await expect(readUnlockProof(proofPath)).rejects.toSatisfy(code('unlock_proof_missing', 400))
    writeFileSync(proofPath, JSON.stringify({ address: overlord.account.address, signature, message }))
    const vault = newVault()
    expect((await vault.unlock(await readUnlockProof(proofPath))).vault_unlocked).toBe(true)
  })

  it('adopts a data key from a peer only when it matches the key commitment', async () => {
    const unlocked = newVault()
    await unlocked.unlock({ address: overlord.account.address, signature, message })
    await unlocked.put('a:pk', 'secret', 'c')
    const replica = newVault()
    expect(await replica.adopt(randomBytes(32))).toBe(false) // a forger's key
    expect(await replica.adopt(Buffer.alloc(31))).toBe(false)
    expect(replica.isUnlocked()).toBe(false)
    const key = unlocked.withDataKey((k) => Buffer.from(k))
    expect(await replica.adopt(key)).toBe(true)
    expect(await replica.withSecret('a:pk', (b) => b.toString())).toBe('secret')
  })

  it('two first unlocks at once (two replicas): one initialises, both end on the same data key', async () => {
    const [a, b] = [newVault(), newVault()]
    const results = await Promise.all([a.unlock({ address: overlord.account.address, signature, message }), b.unlock({ address: overlord.account.address, signature, message })])
    expect(results.filter((r) => r.initialised)).toHaveLength(1)
    await a.put('x', 'from a', 'c')
    expect(await b.withSecret('x', (v) => v.toString())).toBe('from a')
  })

  it('imports the vault.json of the earlier file-based vault once, sealed as it was; the first unlock opens it and writes its commitment', async () => {
    // a vault file as the file-backed vault wrote it: header wrapped under the signature-derived key, one entry
    const { hkdfSync } = await import('node:crypto')
    const sig = Buffer.from(signature.slice(2, 130), 'hex')
    const salt = randomBytes(32)
    const kek = Buffer.from(hkdfSync('sha256', sig, salt, 'svc-vault/v1 kek', 32))
    const dataKey = randomBytes(32)
    const seal = (key: Buffer, plaintext: Buffer, aad: string) => {
      const nonce = randomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', key, nonce).setAAD(Buffer.from(aad))
      return { nonce: nonce.toString('hex'), ciphertext: Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]).toString('hex') }
    }
    const wrapped = seal(kek, dataKey, 'svc-vault/v1 data-key')
    const entry = seal(dataKey, Buffer.from('old secret'), 'company:OLD:cabinet:ceo:pk')
    const file: VaultFile = {
      version: 1,
      vault_id: 'ab'.repeat(16),
      overlord_address: overlord.account.address,
      kdf: { alg: 'HKDF-SHA256', salt: salt.toString('hex'), info: 'svc-vault/v1 kek' },
      wrapped_data_key: { alg: 'AES-256-GCM', ...wrapped },
      entries: { 'company:OLD:cabinet:ceo:pk': { context: 'cabinet_private_key', ...entry, created_at: 1 } },
    }
    const path = join(tempDir(), 'vault.json')
    writeFileSync(path, JSON.stringify(file))
    expect(await importVaultFile(database.db, path)).toBe(1)
    expect(existsSync(path)).toBe(false)
    expect(existsSync(`${path}.imported`)).toBe(true)
    writeFileSync(path, JSON.stringify(file))
    expect(await importVaultFile(database.db, path)).toBe(0) // the database has a vault: never twice
    const vault = newVault()
    expect(await vault.adopt(dataKey)).toBe(false) // no commitment yet: nothing can be adopted before an unlock
    expect((await vault.unlock({ address: overlord.account.address, signature, message })).initialised).toBe(false)
    expect(await vault.withSecret('company:OLD:cabinet:ceo:pk', (b) => b.toString())).toBe('old secret')
    expect(await newVault().adopt(dataKey)).toBe(true)
  })
})
