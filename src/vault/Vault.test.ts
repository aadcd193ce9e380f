import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Hex } from 'viem'
import { beforeEach, describe, expect, it } from 'vitest'
import { ShadowError } from '../overlord/ShadowError.js'
import { tempDir, testOverlord } from '../../tests/support/shadowFixtures.js'
import { readUnlockProof, unlockMessageFor, Vault, type VaultFile } from './Vault.js'
import { errorToResult } from '../handlers/errorCatalogue.js'

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
const code = (c: string, status?: number) => (e: unknown) => e instanceof ShadowError && e.code === c && (status === undefined || errorToResult(e)?.status === status)

describe('Vault (machine 3.4)', () => {
  const overlord = testOverlord()
  const message = unlockMessageFor('http://vault.test')
  let path: string
  let signature: Hex
  const newVault = () => new Vault({ path, overlordAddress: () => overlord.account.address, unlockMessage: message })

  beforeEach(async () => {
    path = join(tempDir(), 'vault.json')
    signature = await overlord.account.signMessage({ message })
  })

  it('is locked at start; every entry operation fails 423 vault_locked', async () => {
    const vault = newVault()
    expect(vault.isUnlocked()).toBe(false)
    expect(() => vault.list()).toThrow(ShadowError)
    let sealed: unknown
    try {
      vault.has('x')
    } catch (error) {
      sealed = error
    }
    expect(code('vault_locked', 423)(sealed)).toBe(true)
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

  it('stores AES-256-GCM entries with fresh 12-byte nonces, the entry id as AAD, and no plaintext on disk', async () => {
    const vault = newVault()
    await vault.unlock({ address: overlord.account.address, signature, message })
    await vault.put('one', 'same plaintext', 'c')
    await vault.put('two', 'same plaintext', 'c')
    const text = readFileSync(path, 'utf8')
    expect(text).not.toContain('same plaintext')
    expect(text).not.toContain(signature.slice(2))
    const file = JSON.parse(text) as VaultFile
    expect(file.entries.one!.nonce).toHaveLength(24)
    expect(file.entries.one!.nonce).not.toBe(file.entries.two!.nonce)
    expect(file.entries.one!.ciphertext).not.toBe(file.entries.two!.ciphertext)
    // Moving a ciphertext under another id fails authentication (AAD = entry id).
    file.entries.two = { ...file.entries.one! }
    writeFileSync(path, JSON.stringify(file))
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
    const foreignPath = join(tempDir(), 'vault.json')
    const foreignKey = testOverlord().account
    const foreign = new Vault({ path: foreignPath, overlordAddress: () => foreignKey.address, unlockMessage: message })
    await foreign.unlock({ address: foreignKey.address, signature: await foreignKey.signMessage({ message }), message })
    const mine = new Vault({ path: foreignPath, overlordAddress: () => overlord.account.address, unlockMessage: message })
    await expect(mine.unlock({ address: overlord.account.address, signature, message })).rejects.toSatisfy(code('vault_unlock_failed', 403))
  })

  it('503 when no overlord address is configured', async () => {
    const vault = new Vault({ path, overlordAddress: () => undefined, unlockMessage: message })
    await expect(vault.unlock({ address: overlord.account.address, signature, message })).rejects.toSatisfy(code('overlord_not_configured', 503))
  })

  it('flow A reads the proof file; a missing file is 400', async () => {
    const proofPath = join(tempDir(), 'proof.json')
    await expect(readUnlockProof(proofPath)).rejects.toSatisfy(code('unlock_proof_missing', 400))
    writeFileSync(proofPath, JSON.stringify({ address: overlord.account.address, signature, message }))
    const vault = newVault()
    expect((await vault.unlock(await readUnlockProof(proofPath))).vault_unlocked).toBe(true)
  })
})
