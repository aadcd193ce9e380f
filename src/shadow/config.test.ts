import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { parseJwtSecret, readShadowConfig, ShadowConfigError } from './config.js'

const strong = randomBytes(32).toString('hex')

describe('SHADOW_JWT_SECRET', () => {
  it('accepts 32 random bytes of hex (with or without 0x)', () => {
    expect(parseJwtSecret(strong)).toHaveLength(32)
    expect(parseJwtSecret(`0x${strong}`)).toHaveLength(32)
  })

  it.each([
    ['too short (31 bytes)', randomBytes(31).toString('hex')],
    ['not hex', 'z'.repeat(64)],
    ['odd length', `${strong}a`],
    ['all zero', '00'.repeat(32)],
    ['one repeated byte', 'ab'.repeat(48)],
    ['repeated 4-byte pattern', 'deadbeef'.repeat(8)],
    ['repeated 8-byte pattern', '0123456789abcdef'.repeat(4)],
    ['few distinct bytes', Buffer.from(Array.from({ length: 40 }, (_, i) => (i * 7) % 5)).toString('hex')],
  ])('refuses %s', (_name, value) => {
    expect(() => parseJwtSecret(value)).toThrow(ShadowConfigError)
  })

  it('refuses what people type instead of generating: the hex of a passphrase, counting bytes', () => {
    const passphraseHex = Buffer.from('my-company-jwt-secret-2024-prod!').toString('hex')
    const counting = Buffer.from(Array.from({ length: 32 }, (_, i) => i)).toString('hex') // 000102…1f
    const stepping = Buffer.from(Array.from({ length: 32 }, (_, i) => (7 * i + 3) & 255)).toString('hex')
    expect(() => parseJwtSecret(passphraseHex)).toThrow(/hex of text.*openssl rand -hex 32/)
    expect(() => parseJwtSecret(counting)).toThrow(/counting sequence.*openssl rand -hex 32/)
    expect(() => parseJwtSecret(stepping)).toThrow(/counting sequence/)
    // …while a thousand generated secrets all pass.
    for (let i = 0; i < 1000; i++) expect(parseJwtSecret(randomBytes(32).toString('hex'))).toHaveLength(32)
  })

  it('never echoes the secret in the error', () => {
    const weak = '00'.repeat(32)
    try {
      parseJwtSecret(weak)
    } catch (error) {
      expect(String((error as Error).message)).not.toContain(weak)
    }
  })
})

describe('readShadowConfig', () => {
  const address = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8'

  it('reads the SHADOW_* names and checksums the address', () => {
    const config = readShadowConfig({
      SHADOW_OVERLORD_ADDRESS: address,
      SHADOW_JWT_SECRET: strong,
      SHADOW_NONCES_PATH: '/tmp/n.sqlite',
      SHADOW_UNLOCK_PROOF_PATH: '/tmp/proof.json',
      SERVICE_DATA_DIR: '/tmp/data',
      SERVICE_PUBLIC_ORIGIN: 'https://gw.example/',
    })
    expect(config.overlordAddress).toBe('0x70997970C51812dc3A010C7d01b50e0d17dc79C8')
    expect(config.noncesPath).toBe('/tmp/n.sqlite')
    expect(config.unlockProofPath).toBe('/tmp/proof.json')
    expect(config.publicOrigin).toBe('https://gw.example')
  })

  it('defaults the nonce file and proof file into the data dir', () => {
    const config = readShadowConfig({ SERVICE_DATA_DIR: '/srv/data' })
    expect(config.overlordAddress).toBeUndefined()
    expect(config.noncesPath).toBe('/srv/data/shadow_nonces.sqlite')
    expect(config.unlockProofPath).toBe('/srv/data/vault_unlock_proof.json')
  })

  it('refuses to start the admin tier without a strong secret', () => {
    expect(() => readShadowConfig({ SHADOW_OVERLORD_ADDRESS: address })).toThrow(ShadowConfigError)
    expect(() => readShadowConfig({ SHADOW_OVERLORD_ADDRESS: address, SHADOW_JWT_SECRET: '11'.repeat(32) })).toThrow(/repeats too few byte values.*openssl rand -hex 32/)
    expect(() => readShadowConfig({ SHADOW_OVERLORD_ADDRESS: 'not-an-address', SHADOW_JWT_SECRET: strong })).toThrow(ShadowConfigError)
  })

  it('ignores dual-address variables', () => {
    const config = readShadowConfig({ SHADOW_OVERLORD_ADDRESS: address, SHADOW_OVERLORD_ADDRESS_2: '0x0', SHADOW_JWT_SECRET: strong })
    expect(config.overlordAddress?.toLowerCase()).toBe(address)
  })
})
